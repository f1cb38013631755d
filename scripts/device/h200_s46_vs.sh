#!/bin/bash
# Session 46's side-by-side (carry .gl, .dev, .lbin; ~3 min): ZINC's Vulkan backend against
# llama.cpp CUDA 0c1e570's llama-bench (flash attention on) on the three tests, through
# `vs_llama`, with the llama.cpp build carried in .lbin/ (build_llama_cuda_here.sh makes it off
# the device, ~5.5 device minutes saved; prepare_here.sh --llama). Without one, carry .lsrc in its
# place: llama.cpp is then built here first (~330 s, the call ~9 min). Options for ZINC's runs:
# $VS_ZINC (see common.sh).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# A warm machine keeps the files an earlier call made.
[ -s /tmp/q8b.gguf ] && [ -s /tmp/moe.gguf ] && ! pgrep -f "synth --preset" > /dev/null || synth
build_llama
ldd $LB | grep -E "cublas|cudart|not found"
wait_synth
vs_llama
echo "[${SECONDS}s] done"
