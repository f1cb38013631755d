#!/bin/bash
# Session 39's last call: the pieces' two candidates (8x512 and 16x512, growing 4×) against
# the old default (8x64, 2×) after 4,096 tokens and on the MoE, alternating.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e /tmp/moe.gguf ] || $Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
for i in 1 2; do
  for o in "--vk-chunks 8x64 --vk-chunk-growth 2" "--vk-chunks 8x512 --vk-chunk-growth 4" \
    "--vk-chunks 16x512 --vk-chunk-growth 4"; do tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 $o; done
done
wait
echo "[${SECONDS}s] the MoE"
for i in 1 2; do
  for o in "--vk-chunks 8x64 --vk-chunk-growth 2" "--vk-chunks 8x512 --vk-chunk-growth 4" \
    "--vk-chunks 16x512 --vk-chunk-growth 4"; do tps $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 $o; done
done
echo "[${SECONDS}s] done"
