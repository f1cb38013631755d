#!/bin/bash
# Session 39's third call: the kernels' clock with the prefetcher's marks alone and with its
# reads (compute-only queue), to see whether the mat-vec stages it reads ahead for get shorter.
. scripts/device/common.sh
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
clocked marks -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 0
clocked on16 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 16
clocked on48 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 48 --vk-prefetch-lookback 3
clocked off -m /tmp/q8b.gguf -p 0 -n 16 -r 1
echo "[${SECONDS}s] done"
