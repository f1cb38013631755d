#!/bin/bash
# Session 15's third call: how long each of llama.cpp's CUDA kernels takes on its own on the
# 30B-A3B file's decode steps — Nsight Compute (ncu, clocks left alone) times every kernel of
# `llama-bench -p 0 -n 1 -r 1` (a warm-up token and a timed one) with CUDA graphs off, so each
# kernel is launched and timed by itself (no overlap with its neighbours, no graph). The table
# is made on this machine from $OUT/ncu-moe.csv. Meanwhile `zinc bench --ablate --twice` on the same
# file. Needs .dev/zinc (for synth),
# .dev/llama-src.tar.xz and .gl.
. scripts/device/common.sh
START=$(date +%s)
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
SYNTH=$!
build_llama 16 > /dev/null &
BUILD=$!
wait $SYNTH
# Meanwhile ZINC's own cost of each kernel on the same file (each run twice in turn).
timeout 200 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --ablate --twice > $OUT/ablate-moe.md 2>&1
grep -E "^\|" $OUT/ablate-moe.md | head -30
wait $BUILD; cat $OUT/build-time.txt
grep -q "Built target llama-bench" $OUT/build.log && rm -f $OUT/build.log $OUT/cmake.log
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
LEFT=$(( 585 - ($(date +%s) - START) ))
echo "ncu gets $LEFT s"
GGML_CUDA_DISABLE_GRAPHS=1 timeout $LEFT $NCU --clock-control none --metrics gpu__time_duration.sum \
  --launch-count 2600 --csv --page raw $LB -m /tmp/moe.gguf -ngl 99 -fa 1 -p 0 -n 1 -r 1 > $OUT/ncu-moe.csv 2> $OUT/ncu-err.txt
echo "ncu rc=$? $(wc -l < $OUT/ncu-moe.csv) lines"; tail -3 $OUT/ncu-err.txt
