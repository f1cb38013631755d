#!/bin/bash
# Session 35 (carry .gl and .dev): the one-pass prompt attention (attn_fa.comp) held to the CPU
# by the selftest (its key runs split 1, 2 and 4 ways, and the two-pass attn_cm), then against
# attn_cm (--vk-prompt-attn-passes 2), alternating: Qwen3-8B prompts of 512 and 2,048,
# Qwen3-30B-A3B prompt 512; splits 2 and 4; the profiles' attention lines; the drivers' counts.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
gpu_selftest; cp $OUT/selftest.md $R/
for o in "--vk-prompt-attn-splits 2" "--vk-prompt-attn-splits 4" "--vk-prompt-attn-passes 2"; do
  timeout 60 $Z selftest --backend vulkan --filter attention $o > $OUT/st.md 2>&1
  echo "selftest attention $o: rc=$? $(tail -1 $OUT/st.md)"; grep -i fail $OUT/st.md | head -5
done
grep -E "attention .*rows=(9|70|101|130|300) " $R/selftest.md
wait_synth
P1="--vk-prompt-attn-passes 1"; P2="--vk-prompt-attn-passes 2"
ab "$P1" "$P2" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "--vk-prompt-attn-splits 2" "--vk-prompt-attn-splits 4" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "$P1" "$P2" -m /tmp/q8b.gguf -p 2048 -n 0 -r 2
tps $Z -m /tmp/q8b.gguf -p 2048 -n 0 -r 2 --vk-prompt-attn-splits 2
ab "$P1" "$P2" -m /tmp/moe.gguf -p 512 -n 0 -r 3
tps $Z -m /tmp/moe.gguf -p 512 -n 0 -r 3 --vk-prompt-attn-splits 2
for o in "$P1" "$P2" "--vk-prompt-attn-splits 2" "--vk-prompt-attn-splits 4"; do
  timeout 120 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 512 -n 0 -r 2 --profile $o \
    > "$R/profile-q8b-${o// /}.md" 2>&1; echo "profile $o rc=$?"
  grep -E "attn|qk_prep" "$R/profile-q8b-${o// /}.md" | head -8
done
# Registers and shared memory as the driver compiled both (a spill would show here).
for o in 1 2; do
  timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 64 -n 0 -r 1 --vk-pipeline-stats \
    --vk-prompt-attn-passes $o 2>&1 | grep -E "attn_(fa|cm)|qk_prep" | head -4
done
