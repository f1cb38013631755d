#!/bin/bash
# Session 46's side-by-side (carry .gl, .dev, .lbin; ~3 min): ZINC's Vulkan backend against
# llama.cpp CUDA 0c1e570's llama-bench (flash attention on) on the three tests, through
# `vs_llama`. The llama.cpp build travels in .lbin/ (llama-bin.txz.*, build/bin packed), made on
# the 2-core machine instead of on the device (~5.5 device minutes saved; build_llama_cuda_here.sh): CUDA 13.0.88 from
# PyPI's wheels (nvidia-cuda-nvcc 13.0.88, -runtime 13.0.96, -cublas 13.0.2.14, -cccl 13.0.85,
# -nvvm and -crt 13.0.88) laid out as a toolkit, a libcuda.so stub (every entry point cuda.h
# declares, soname libcuda.so.1; the driver's own is loaded at run time), and build_llama's
# cmake flags with -DBUILD_SHARED_LIBS=OFF. cuBLAS is the device's libcublas.so.13, found
# below where the loader does not. Options for ZINC's runs: $VS_ZINC (see common.sh).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# A warm machine keeps the files an earlier call made.
[ -s /tmp/q8b.gguf ] && [ -s /tmp/moe.gguf ] && ! pgrep -f "synth --preset" > /dev/null || synth
build_llama
if ldd $LB | grep -q "not found"; then
  d=$(dirname "$(find /usr /opt -name 'libcublas.so.13*' 2>/dev/null | head -1)")
  export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "cuBLAS from $d"
fi
ldd $LB | grep -E "cublas|cudart|not found"
wait_synth
vs_llama
echo "[${SECONDS}s] done"
