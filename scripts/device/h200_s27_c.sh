#!/bin/bash
# Session 27, the lean form of h200_s27_b.sh for what device time failed starts left: the
# selftest, the attention's A/B (PRE on and off), its variants and ablations, the MoE and 4,096
# tokens of context on and off; no llama.cpp build, no side-by-side.
. scripts/device/common.sh
synth
gpu_selftest
wait_synth
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $T; tps $Z $T --vk-attn-preload false; done
tps $Z $T --vk-attn-ahead 8; tps $Z $T --vk-attn-wg 256 --vk-attn-ahead 8
tps $Z $T --vk-attn-rope-table true
for a in 1 2 4 8 16 31; do tps $Z $T --vk-attn-ablate $a; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-preload false; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D; tps $Z $D --vk-attn-preload false
