#!/bin/bash
# One GPU call: llama.cpp's CUDA build (commit 0c1e570, as vendored by PyPI's llama-cpp-python
# 0.3.36 sdist) built on the device, then ZINC's Vulkan backend against its llama-bench (flash
# attention on) on the same synthetic files through scripts/bench_vs_llama.py: Qwen3-8B prompt 512
# + generation 128, generation 128 after 4,096 tokens, and Qwen3-30B-A3B prompt 512 + generation
# 128. Needs $OUT, the Vulkan loader debs in .gl/, ZINC (the release binary, default .dev/zinc)
# and LLAMA_SRC, the source as a .tar.xz without what a CUDA llama-bench does not build (~7 MB
# where the sdist is ~50 MB, so it can be carried): prepare_here.sh makes it, from the sdist with
# its sha256 checked, as .lsrc/llama-src.tar.xz, where build_llama looks first.
# The build was done 330 s into its call (unpacking and configuring included) on 12 of the H200
# host's 16 cores (sm_90 only, niced beside other work);
# the three comparisons after it ~60 s (2026-11-30): all of it fits one 600-second call.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
build_llama
wait
vs_llama
