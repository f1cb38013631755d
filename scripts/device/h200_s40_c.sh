#!/bin/bash
# Session 40, third call (carry .gl, .dev, .lbin): adaptive pieces reading their fence at most
# every 4 µs (the new default) against at every command (`--vk-adaptive-poll-us 0`, the first two
# calls' form), alternating on the three decode tests; the side-by-sides at the defaults; the
# GPU selftest.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama
wait_synth
for M in "-m /tmp/moe.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" \
  "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"; do
  for i in 1 2; do
    for o in "" "--vk-adaptive-poll-us 0"; do tps $Z $M $o; done
  done
done
echo "[${SECONDS}s] A/B done"
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
echo "[${SECONDS}s] side-by-side done"
OUT=$R gpu_selftest
echo "[${SECONDS}s] selftest done"
