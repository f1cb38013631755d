#!/bin/bash
# Session 39's fifth call: the clock with the prefetcher reading (its plan now kept across the
# clock's own recordings, which left the fourth call's clocked runs without one), and its
# workgroups and polling: Qwen3-8B tg128.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
clocked on16 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 16
clocked on48 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 48 --vk-prefetch-lookback 3
clocked marks -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 0
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
tps $Z $T --vk-prefetch 0
for o in "16x8" "32x8" "64x4" "8x16"; do tps $Z $T --vk-prefetch 16 --vk-prefetch-shape $o; done
tps $Z $T --vk-prefetch 16 --vk-prefetch-delay 1024
tps $Z $T --vk-prefetch 0
echo "[${SECONDS}s] done"
