#!/bin/bash
# llama.cpp's CUDA llama-bench (commit 0c1e570, as PyPI's llama-cpp-python 0.3.36 sdist vendors
# it), built on this machine, which has no GPU and no CUDA, instead of on the device: the build
# took ~330 s of a device call's 600 on 12 cores; here 50 minutes on 2 cores, niced, by hand
# (session 46), and under 18 minutes as this script, started by prepare_here.sh --llama (session 47,
# the machine otherwise idle). Writes .lbin/llama-bin.txz.* (build/bin packed,
# xz), which `build_llama` in common.sh unpacks at /tmp/lcu on the device instead of building
# (carry .lbin).
#
# The toolkit is CUDA 13.0 from PyPI's wheels (pinned below), laid out at $CUDA as a toolkit
# (bin, nvvm, include, lib64), and a libcuda.so stub with soname libcuda.so.1 defining every
# entry point cuda.h declares (after its versioning macros), for ggml-cuda's virtual-memory pool
# to link against; on the device the driver's own libcuda.so.1 is loaded. cuBLAS and the CUDA
# runtime are linked dynamically (libcublas.so.13, libcudart.so.13): the device's CUDA 13 has them
# (common.sh's build_llama finds them where the loader does not). -DBUILD_SHARED_LIBS=OFF makes one
# llama-bench with ggml inside, so no RUNPATH ties it to this machine's build folder.
#
# Needs: the source tarball .lsrc/llama-src.tar.xz (prepare_here.sh makes it), gcc/g++ (12 is
# within CUDA 13's range), pip, network to PyPI. Usage: bash scripts/device/build_llama_cuda_here.sh
set -euo pipefail
CUDA=${CUDA:-/opt/cuda13}
PIPDIR=${PIPDIR:-/opt/cu13pip}
LCU=/tmp/lcu
pip install -q cmake ninja
pip install -q --target "$PIPDIR" nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 \
  nvidia-cublas==13.0.2.14 nvidia-cuda-cccl==13.0.85 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88
P=$PIPDIR/nvidia/cu13
rm -rf "$CUDA" && mkdir -p "$CUDA/lib64/stubs" "$CUDA/targets/x86_64-linux"
cp -a "$P/bin" "$CUDA/bin"
ln -s "$P/nvvm" "$CUDA/nvvm"
ln -s "$P/include" "$CUDA/include"
for f in "$P"/lib/*; do ln -s "$f" "$CUDA/lib64/"; done
for l in cudart cublas cublasLt; do ln -s "lib$l.so.13" "$CUDA/lib64/lib$l.so"; done
ln -s "$CUDA/include" "$CUDA/targets/x86_64-linux/include"
ln -s "$CUDA/lib64" "$CUDA/targets/x86_64-linux/lib"
echo '#include <cuda.h>' | gcc -E -I"$CUDA/include" -x c - | tr '\n' ' ' \
  | grep -oE 'CUresult +(__attribute__\(\(visibility\("default"\)\)\) +)?cu[A-Za-z0-9_]+ *\(' \
  | grep -oE 'cu[A-Za-z0-9_]+ *\($' | tr -d ' (' | sort -u \
  | awk '{print "void " $1 "(void) {}"}' > /tmp/libcuda-stub.c
gcc -shared -fPIC -o "$CUDA/lib64/stubs/libcuda.so" -Wl,-soname,libcuda.so.1 /tmp/libcuda-stub.c
mkdir -p $LCU && rm -rf $LCU/llama.cpp $LCU/build
tar -xJf .lsrc/llama-src.tar.xz -C $LCU
export PATH=$CUDA/bin:$PATH
cmake -G Ninja -S $LCU/llama.cpp -B $LCU/build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_COMPILER="$CUDA/bin/nvcc" -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release
nice -n 15 cmake --build $LCU/build --target llama-bench -j 2
mkdir -p .lbin && rm -f .lbin/llama-bin.txz.*
tar -C $LCU -cf - build/bin/llama-bench | xz -T2 -6 | split -b 40M - .lbin/llama-bin.txz.
ls -la .lbin
