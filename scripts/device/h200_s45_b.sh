#!/bin/bash
# For session 46, after h200_s45_a.sh (carry .gl, .dev; ~5 min): attn_dec_cm.comp's two forms
# (`--vk-attn-cm 1`, `2`) at 32 slices against the one-pass default after 1,024 tokens;
# Qwen3-30B-A3B (8 query heads a KV head, 4 KV heads) after 4,096 tokens at 32 and 64 slices
# against the one-pass default and `--vk-attn-rows 2`; the whole GPU selftest with each form;
# then session 44's pending checks of `--vk-attn-rows 2` (the selftest, Qwen3-8B after 4,096
# tokens); last, attn_combine's AHEAD variant (`--vk-combine-ahead true`, 8 slices' partials
# loaded at once) against the plain merge after 4,096 tokens, alternating, and its clock. Its log is `0log.txt` (tee it there; the selftests' reports stay in /tmp, their
# failures in the log).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth; wait_8b
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
D1="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024"
echo "8B d1024: cm1 $(tsj $D1 --vk-attn-cm 1 --vk-attn-slices 32)  cm2 $(tsj $D1 --vk-attn-cm 2 --vk-attn-slices 32)  one-pass $(tsj $D1)"
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096"
echo "MoE d4096: cm1 32 $(tsj $M --vk-attn-cm 1 --vk-attn-slices 32)  cm1 64 $(tsj $M --vk-attn-cm 1 --vk-attn-slices 64)  cm2 32 $(tsj $M --vk-attn-cm 2 --vk-attn-slices 32)  cm2 64 $(tsj $M --vk-attn-cm 2 --vk-attn-slices 64)  one-pass $(tsj $M)  rows2 $(tsj $M --vk-attn-rows 2)"
echo "[${SECONDS}s] cm done"
for f in 1 2; do
  timeout 120 $Z selftest --backend vulkan --vk-attn-cm $f > /tmp/selftest-cm$f-all.md 2>&1
  echo "selftest cm $f (all) rc=$? $(tail -1 /tmp/selftest-cm$f-all.md)"
  grep -iE "fail|error" /tmp/selftest-cm$f-all.md | head -4
done
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 2 > /tmp/selftest-rows2.md 2>&1
echo "selftest rows 2 rc=$? $(tail -1 /tmp/selftest-rows2.md)"; grep -i fail /tmp/selftest-rows2.md | head -5
echo "8B d4096: rows2 $(tsj $D --vk-attn-rows 2)  one-pass $(tsj $D)"
for i in 1 2; do echo "8B d4096: combine ahead $(tsj $D --vk-combine-ahead true)  plain $(tsj $D)"; done
echo "MoE d4096: combine ahead $(tsj $M --vk-combine-ahead true)  plain $(tsj $M)"
clocked ahead -m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096 --vk-combine-ahead true
echo "[${SECONDS}s] done"
