#!/bin/bash
# Session 18, fifth GPU call (one build, 8x64 pieces now the default): Q6_K decode mat-vec
# shapes (`--vk-decode-q6k`: the output head, attn_v and Q6_K expert downs) on Qwen3-30B-A3B
# and Qwen3-8B tg128 against the default 32x1x128, the first piece of 16 against 8 on Qwen3-8B,
# and a profile of the MoE at the default and at two rows a group.
. scripts/device/common.sh
synth
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-decode-q6k 32x2x128; tps $Z $M --vk-decode-q6k 32x1x256; done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-chunks 16x64; tps $Z $M --vk-decode-q6k 32x2x128; done
for q in 32x1x128 32x2x128; do
  timeout 90 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile --vk-decode-q6k $q 2>&1 | grep -E "Q6_K|down"
done
