#!/bin/bash
# Session 39's eighth call: fewer pieces a step. The clock showed the six boundaries between
# a decode step's pieces (8, 16, 32, 64, 64, 64 commands) each cost ~13 µs more than a
# barrier (the down-projection's gap 15 µs in layers 0, 2, 6, 14, 22, 30 against 1.9 in the
# others): pieces growing faster (`--vk-chunk-growth`) leave fewer. Qwen3-8B tg128 alternating,
# then after 4,096 tokens and the MoE for the likely winners; the clock for one.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  for o in "" "--vk-chunks 8x512 --vk-chunk-growth 4" "--vk-chunks 8x512 --vk-chunk-growth 8" \
    "--vk-chunks 16x512 --vk-chunk-growth 4"; do tps $Z $T $o; done
done
for o in "--vk-chunks 8x512 --vk-chunk-growth 3" "--vk-chunks 8x512 --vk-chunk-growth 16" \
  "--vk-chunks 4x512 --vk-chunk-growth 16" "--vk-chunks 8x64 --vk-chunk-growth 4"; do tps $Z $T $o; done
echo "[${SECONDS}s] the clock at 8x512, 4x"
clocked g4 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-chunks 8x512 --vk-chunk-growth 4
echo "[${SECONDS}s] after 4,096 tokens"
for o in "" "--vk-chunks 8x512 --vk-chunk-growth 4" "" "--vk-chunks 8x512 --vk-chunk-growth 4"; do
  tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 $o; done
wait
echo "[${SECONDS}s] the MoE"
for o in "" "--vk-chunks 8x512 --vk-chunk-growth 4" "" "--vk-chunks 8x512 --vk-chunk-growth 4"; do
  tps $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 $o; done
echo "[${SECONDS}s] done"
