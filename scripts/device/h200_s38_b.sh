#!/bin/bash
# Session 38's last call (carry .gl, .dev and .lbin: llama.cpp's CUDA build packed by the first
# call, commit 0c1e570 for sm_90): at the new prompt defaults (`mm_beside`, `prep_rows`,
# `act_quant_sg`, `glu_round`, `norm_round` on; split-K, `mm_add` and `moe_skip` removed),
# the default selftest, the Qwen3-8B side-by-side with llama.cpp's CUDA build, then the
# Qwen3-30B-A3B one where the call is young enough (a short call: little device time was left).
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
build_llama > $R/llama.txt 2>&1
gpu_selftest; cp $OUT/selftest.md $R/
wait
echo "[${SECONDS}s]"
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs 3350 --out $R/cuda-d0
echo "[${SECONDS}s]"
if [ $SECONDS -lt 150 ]; then
  $Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
  echo "== Qwen3-30B-A3B: prompt 512, generation 128"
  $B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $R/cuda-moe
fi
echo "[${SECONDS}s]"
