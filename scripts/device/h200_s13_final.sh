#!/bin/bash
# Session 13's last call: llama.cpp's CUDA build in the background (niced, 12 cores) while the
# GPU runs `zinc selftest`, Q6_K mat-vecs at two pieces a lane (`--vk-decode-pieces 2`) against
# the default, and what each kernel takes on its own (`zinc bench --ablate --twice`) on both
# files; then the side-by-side of scripts/device/h200_cuda_vs_llama.sh. Needs $OUT, ZINC,
# LLAMA_SRC (see h200_cuda_vs_llama.sh) and .gl/ (common.sh). About 8 minutes.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
mkdir -p /tmp/lcu && tar -xJf ${LLAMA_SRC:-.dev/llama-src.tar.xz} -C /tmp/lcu
(
  start=$(date +%s)
  nice -n 10 cmake -S /tmp/lcu/llama.cpp -B /tmp/lcu/build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release > $OUT/cmake.log 2>&1
  nice -n 10 cmake --build /tmp/lcu/build --target llama-bench -j 12 > $OUT/build.log 2>&1
  echo "llama.cpp CUDA build: $(( $(date +%s) - start )) s" > $OUT/build-time.txt
) &
BUILD=$!
timeout 100 $Z selftest --backend vulkan > $OUT/selftest.md 2>&1
echo "selftest rc=$? $(tail -1 $OUT/selftest.md)"; grep -i fail $OUT/selftest.md | head -5
while [ ! -s /tmp/moe.gguf ] || pgrep -f "zinc synth" >/dev/null; do sleep 2; done
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  tps $Z $M; tps $Z $M --vk-decode-pieces 2
done
for f in q8b moe; do
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --ablate --twice > $OUT/twice-$f.md 2>&1
  grep -E "^\|" $OUT/twice-$f.md | head -16
done
wait $BUILD; cat $OUT/build-time.txt
LB=/tmp/lcu/build/bin/llama-bench
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 4300 --out $OUT/cuda-d4096
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
