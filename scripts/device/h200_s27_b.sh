#!/bin/bash
# Session 27, second call: the short-context decode attention. Selftest at the new default
# (attn_dec.comp's PRE: one slice's first keys and values loaded before the q/k prep's
# barriers, the prep's loads one trip to memory deep); Qwen3-8B tg128 with PRE on and off,
# alternating, with 8 keys ahead, with workgroups of 256, with both, and with RoPE's cos and
# sin from the host (`--vk-attn-rope-table true`); what each part of the attention
# costs (`--vk-attn-ablate`, timing only: 1 q/k norms, 2 RoPE, 4 scores, 8 values, 16 the
# output's quantization, 31 all of them); the MoE and 4,096 tokens of context on and off.
. scripts/device/common.sh
synth
gpu_selftest
wait_synth
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $T; tps $Z $T --vk-attn-preload false; tps $Z $T --vk-attn-ahead 8; tps $Z $T --vk-attn-wg 256
  tps $Z $T --vk-attn-wg 256 --vk-attn-ahead 8; tps $Z $T --vk-attn-rope-table true
done
for a in 1 2 4 8 16 31; do tps $Z $T --vk-attn-ablate $a; done
tps $Z $T --vk-attn-preload false --vk-attn-ablate 31
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-preload false; done
tps $Z $M --vk-attn-ablate 31
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D; tps $Z $D --vk-attn-preload false
timeout 120 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/profile8b.txt 2>&1
grep -E "attn_prep|norm_quant" $OUT/profile8b.txt
