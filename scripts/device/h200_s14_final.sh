#!/bin/bash
# Session 14's last call: llama.cpp's CUDA build (0c1e570) in the background; meanwhile `zinc
# selftest` at the new defaults (Q4_K decode mat-vecs with sub-block pairs, two rows a group of
# lanes from 4,096 rows up) and the three decode tests alternating with ZINC_OLD (the build
# before that default: .dev/zinc-prev); then the side-by-side (scripts/bench_vs_llama.py).
# Needs .dev/zinc, .dev/zinc-prev, .dev/llama-src.tar.xz and .gl.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama 12 > /dev/null &
BUILD=$!
while [ ! -s /tmp/q8b.gguf ] || pgrep -f "zinc synth" >/dev/null; do sleep 2; done
gpu_selftest
ZINC_OLD=.dev/zinc-prev decode_ab
wait $BUILD; cat $OUT/build-time.txt
grep -q "Built target llama-bench" $OUT/build.log && rm -f $OUT/build.log $OUT/cmake.log
vs_llama
