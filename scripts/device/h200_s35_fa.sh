#!/bin/bash
# Session 35 (carry .gl and .dev): the one-pass prompt attention (attn_fa.comp) held to the CPU
# by the selftest, then against the two-pass attn_cm (--vk-prompt-attn-passes 2), alternating:
# Qwen3-8B prompts of 512 and 2,048, Qwen3-30B-A3B prompt 512; the profiles' attention lines.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
gpu_selftest; cp $OUT/selftest.md $R/
grep -i "attention" $OUT/selftest.md | head -30
wait_synth
A="--vk-prompt-attn-passes 1"; B="--vk-prompt-attn-passes 2"
ab "$A" "$B" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "$A" "$B" -m /tmp/q8b.gguf -p 2048 -n 0 -r 2
ab "$A" "$B" -m /tmp/moe.gguf -p 512 -n 0 -r 3
for o in 1 2; do
  timeout 120 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 512 -n 0 -r 2 --profile \
    --vk-prompt-attn-passes $o > $R/profile-q8b-$o.md 2>&1; echo "profile $o rc=$?"
  grep -E "attn|qk_prep" $R/profile-q8b-$o.md | head -8
done
# Registers and shared memory as the driver compiled both (a spill would show here).
for o in 1 2; do
  timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 64 -n 0 -r 1 --vk-pipeline-stats \
    --vk-prompt-attn-passes $o 2>&1 | grep -E "attn_(fa|cm)|qk_prep" | head -4
done
