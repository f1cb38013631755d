#!/bin/bash
# (Historical: `--vk-attn-vsh` and VSH were removed after these calls; see BENCHMARKS, session 28.)
# Session 28, fourth call: VSH as compiled variants (attn_dec_vsh, attn_dec_prep_vsh) instead of
# a specialization constant, so that the kernels without it are as before: after 4,096 tokens
# and tg128 against session 27's build (ZINC_OLD, f44f91c) alternating, then tg128 with each
# option off; the MoE against the old build.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
O=.dev/zinc_old
synth
gpu_selftest
wait_synth
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $O $D; tps $Z $D; done
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $O $T; tps $Z $T; done
tps $Z $T --vk-attn-vsh false; tps $Z $T --vk-attn-x32 false
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $O $M; tps $Z $M; done
