#!/bin/bash
# One GPU call (session 12): llama.cpp's CUDA build started in the background (as
# h200_cuda_vs_llama.sh builds it, niced on 12 cores), and while it builds: `zinc selftest` with
# the q/k prep fused into the attention (`--vk-fuse-qk`, default on) and without, and decode
# timings alternating the two (Qwen3-8B tg128 from an empty context, tg64 after 4,096 tokens,
# Qwen3-30B-A3B tg128); then the side-by-side against llama-bench at ZINC's defaults, as
# h200_cuda_vs_llama.sh runs it. About 7 minutes. Needs $OUT, ZINC, the loader debs in .gl/ and
# .dev/llama-src.tar.xz (see h200_cuda_vs_llama.sh).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
Z=${ZINC:-.dev/zinc}
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf >/dev/null 2>&1 &
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf >/dev/null 2>&1 &
mkdir -p /tmp/lcu && tar -xJf ${LLAMA_SRC:-.dev/llama-src.tar.xz} -C /tmp/lcu
start=$(date +%s)
( cmake -S /tmp/lcu/llama.cpp -B /tmp/lcu/build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release > $OUT/cmake.log 2>&1 &&
  nice -n 19 cmake --build /tmp/lcu/build --target llama-bench -j 12 > $OUT/build.log 2>&1;
  echo "llama.cpp CUDA build: $(( $(date +%s) - start )) s rc=$?" > $OUT/built.txt ) &
build=$!
for x in true false; do
  timeout 60 $Z selftest --backend vulkan --vk-fuse-qk $x > $OUT/selftest-$x.md 2>&1
  echo "selftest [fuse-qk $x] rc=$? $(tail -1 $OUT/selftest-$x.md)"; grep FAIL $OUT/selftest-$x.md | head -3
done
while [ ! -s /tmp/moe.gguf ] || pgrep -f "synth --preset" >/dev/null; do sleep 2; done
tps() {
  echo "== $*: $(timeout 90 $Z bench --backend vulkan "$@" 2>&1 | grep -aE '^\| qwen|host waited|spanned|rror' \
    | tr '\n' ' ' | sed 's/zinc bench://g' | awk -F'|' '{print $1 $(NF-1) $NF}')"
}
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do for x in true false; do tps $M --vk-fuse-qk $x; done; done
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for x in true false; do tps $M --vk-fuse-qk $x; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for x in true false; do tps $M --vk-fuse-qk $x; done
wait $build; cat $OUT/built.txt
LB=/tmp/lcu/build/bin/llama-bench
[ -x $LB ] || { tail -20 $OUT/build.log; exit 1; }
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 4300 --out $OUT/cuda-d4096
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
