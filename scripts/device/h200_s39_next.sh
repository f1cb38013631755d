#!/bin/bash
# Prepared in session 39, run as session 40's first call (carry .gl and .dev; results in
# BENCHMARKS): whether a boundary between a decode step's
# pieces (~13 µs more than a barrier on the H100, session 39's clock) is the piece's own fence
# (`--vk-piece-fences false`: only the step's last submit fenced) or the submit itself (fewer
# pieces: `--vk-chunks 8x512 --vk-chunk-growth 4`), both, and adaptive pieces (`--vk-chunk-adaptive
# true`: a piece also goes once the device has finished the ones before, so they may grow fast
# without the MoE's device waiting for its host). Qwen3-8B tg128 alternating, the clock's gap
# before the stages after the boundaries, then after 4,096 tokens and the MoE.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth
wait_8b
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  for o in "" "--vk-piece-fences false" "--vk-chunks 8x512 --vk-chunk-growth 4" \
    "--vk-chunks 8x512 --vk-chunk-growth 4 --vk-piece-fences false" \
    "--vk-chunks 8x512 --vk-chunk-growth 4 --vk-chunk-adaptive true"; do tps $Z $T $o; done
done
clocked fences -m /tmp/q8b.gguf -p 0 -n 16 -r 1
clocked nofences -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-piece-fences false
wait_synth
for M in "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do
    for o in "" "--vk-piece-fences false" "--vk-chunks 8x512 --vk-chunk-growth 4 --vk-chunk-adaptive true"; do
      tps $Z $M $o
    done
  done
done
echo "[${SECONDS}s] done"
