#!/bin/bash
# One GPU call: llama.cpp's CUDA build (commit 0c1e570, as vendored by PyPI's llama-cpp-python
# 0.3.36 sdist) built on the device, then ZINC's Vulkan backend against its llama-bench (flash
# attention on) on the same synthetic files through scripts/bench_vs_llama.py: Qwen3-8B prompt 512
# + generation 128, generation 128 after 4,096 tokens, and Qwen3-30B-A3B prompt 512 + generation
# 128. Needs $OUT, the Vulkan loader debs in .gl/, ZINC (the release binary, default .dev/zinc)
# and LLAMA_SRC, the source as a .tar.xz without what a CUDA llama-bench does not build (~7 MB
# where the sdist is ~50 MB, so it can be carried), made here with:
#   tar -C llama_cpp_python-0.3.36/vendor --exclude='llama.cpp/docs' --exclude='llama.cpp/models' \
#     --exclude='llama.cpp/media' --exclude='llama.cpp/gguf-py' --exclude='llama.cpp/tests' \
#     --exclude='llama.cpp/benches' --exclude='llama.cpp/examples' \
#     --exclude='llama.cpp/tools/server/public*' --exclude='llama.cpp/tools/server/webui' \
#     --exclude='llama.cpp/ggml/src/ggml-'{sycl,hexagon,opencl,metal,et,vulkan} \
#     -cJf .dev/llama-src.tar.xz llama.cpp
# The build was done 330 s into its call (unpacking and configuring included) on 12 of the H200
# host's 16 cores (sm_90 only, niced beside other work);
# the three comparisons after it ~60 s (2026-11-30): all of it fits one 600-second call.
set -e
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
Z=${ZINC:-.dev/zinc}
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf >/dev/null 2>&1 &
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf >/dev/null 2>&1 &
mkdir -p /tmp/lcu && tar -xJf ${LLAMA_SRC:-.dev/llama-src.tar.xz} -C /tmp/lcu
start=$(date +%s)
cmake -S /tmp/lcu/llama.cpp -B /tmp/lcu/build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release > $OUT/cmake.log 2>&1
cmake --build /tmp/lcu/build --target llama-bench -j 16 > $OUT/build.log 2>&1
echo "llama.cpp CUDA build: $(( $(date +%s) - start )) s"
wait
LB=/tmp/lcu/build/bin/llama-bench
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 4300 --out $OUT/cuda-d4096
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
