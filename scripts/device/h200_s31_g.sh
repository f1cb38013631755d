#!/bin/bash
# Session 31, seventh call: the sixth call's one lead — one pass over split slices in
# workgroups of 128 (258.65 / 258.31 against 257.49 / 254.68 after 4,096 tokens) — again,
# alternating three times, and after 1,024 tokens twice.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
O="--vk-attn-one-pass true --vk-attn-wg 128"
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2 3; do tps $Z $D; tps $Z $D $O; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024"
for i in 1 2; do tps $Z $D; tps $Z $D $O; done
