#!/bin/bash
# Session 40, second call (carry .gl, .dev, .lbin: h200_s40_a.sh's llama.cpp build): the first
# piece at 16 commands (`--vk-chunks 16x512`, +1.7% on Qwen3-8B tg128 in the first call) and at
# 12 against the default 8, alternating on the three decode tests; then the side-by-sides twice,
# at the defaults and at 16x512 (`VS_ZINC`), each test's pair back to back.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama
wait_synth
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096" \
  "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do
    for o in "" "--vk-chunks 16x512" "--vk-chunks 12x512"; do tps $Z $M $o; done
  done
done
echo "[${SECONDS}s] A/B done"
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
echo "[${SECONDS}s] side-by-side at the defaults done"
VS_ZINC="--zinc-arg=--vk-chunks --zinc-arg=16x512" vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d-16.json 2>/dev/null; done
echo "[${SECONDS}s] side-by-side at 16x512 done"
