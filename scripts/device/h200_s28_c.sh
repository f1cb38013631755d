#!/bin/bash
# (Historical: `--vk-attn-vsh` and VSH were removed after these calls; see BENCHMARKS, session 28.)
# Session 28, third call: after 4,096 tokens against session 27's build (ZINC_OLD, f44f91c:
# nothing of attn_x32 or VSH applies past one slice at the defaults, so the same speed is
# expected), then VSH in split slices of up to 128 keys (`--vk-attn-slices 32` or 64 at 4,096
# keys) with and without it; tg128 against session 27's build.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
O=.dev/zinc_old
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
gpu_selftest
wait
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $O $D; tps $Z $D; done
for i in 1 2; do tps $Z $D --vk-attn-slices 32; tps $Z $D --vk-attn-slices 32 --vk-attn-vsh false; done
tps $Z $D --vk-attn-slices 64; tps $Z $D --vk-attn-slices 64 --vk-attn-vsh false
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $O $T; tps $Z $T; done
