#!/bin/bash
# Session 39's fourth call: the prefetcher's marks by a one-invocation shader beside each
# stage's first dispatch (mark.comp) instead of a buffer update after each barrier (which made
# every barrier a compute-and-transfer one: 7.2 against 2.3 µs, the mat-vecs after it slower,
# and nothing the prefetcher read helped). Qwen3-8B tg128: off, marks only, reads of 16 / 32 /
# 48 MiB a stage, alternating; the clock with marks and with reads.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  for o in "" "--vk-prefetch 0" "--vk-prefetch 16" "--vk-prefetch 48 --vk-prefetch-lookback 3"; do
    tps $Z $T $o
  done
done
tps $Z $T --vk-prefetch 8
tps $Z $T --vk-prefetch 32
tps $Z $T --vk-prefetch 16 --vk-prefetch-shape 132x8
echo "[${SECONDS}s] the clock"
clocked marks -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 0
clocked on48 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 48 --vk-prefetch-lookback 3
echo "[${SECONDS}s] done"
