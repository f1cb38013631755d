#!/bin/bash
# Session 39's seventh call: the prefetcher declaring shared memory (so the SMs it sits on keep
# a share the gate/up can start beside: lean workgroups did not help, 21.7 µs to start them),
# Qwen3-8B tg128; the clock for one of them.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
tps $Z $T --vk-prefetch 0
for o in "16 --vk-prefetch-shared 16384" "16 --vk-prefetch-shared 49152" \
  "16 --vk-prefetch-wg 32 --vk-prefetch-shape 264x16 --vk-prefetch-shared 16384" \
  "16 --vk-prefetch-wg 32 --vk-prefetch-shape 264x16 --vk-prefetch-shared 49152" \
  "32 --vk-prefetch-shared 32768"; do
  tps $Z $T --vk-prefetch $o
done
tps $Z $T --vk-prefetch 0
clocked sh -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 16 --vk-prefetch-shared 49152
echo "[${SECONDS}s] done"
