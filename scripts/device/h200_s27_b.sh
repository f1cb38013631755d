#!/bin/bash
# (Its --vk-attn-preload was measured here, on the H100 the call got, and removed after: slower.)
# Session 27, second call (the last the session's device time allowed: starts kept failing):
# the short-context decode attention, then the side-by-side. llama.cpp's CUDA build beside;
# selftest at the new default (attn_dec.comp's PRE: one slice's first keys and values loaded
# before the q/k prep's barriers, the prep's loads one trip to memory deep); Qwen3-8B tg128
# with PRE on and off, alternating, then with 8 keys ahead, with workgroups of 256 and 8 ahead,
# and with RoPE's cos and sin from the host (`--vk-attn-rope-table true`); what each part of
# the attention costs (`--vk-attn-ablate`, timing only: 1 q/k norms, 2 RoPE, 4 scores, 8
# values, 16 the output's quantization, 31 all of them); the MoE and 4,096 tokens of context
# with PRE on and off; the three side-by-sides at the defaults.
. scripts/device/common.sh
llama_beside
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
llama_wait
vs_llama
