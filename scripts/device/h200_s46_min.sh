#!/bin/bash
# Session 46's last ~3 device minutes (carry .gl, .dev): the least that tells whether
# attn_dec_cm.comp is right and worth the rest (h200_s46_a.sh): each form's selftest attention
# cases while the Qwen3-8B file is made, then Qwen3-8B tg64 after 4,096 tokens, each form at 32
# slices against the one-pass default, alternating. Its log is `0log.txt` (tee it there).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
for f in 2 1; do
  timeout 60 $Z selftest --backend vulkan --vk-attn-cm $f --filter attention > /tmp/selftest-cm$f.md 2>&1
  echo "[${SECONDS}s] selftest cm $f (attention) rc=$? $(tail -1 /tmp/selftest-cm$f.md)"
  grep -iE "fail|error" /tmp/selftest-cm$f.md | head -6
done
wait_8b
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  echo "[${SECONDS}s] 8B d4096 32 slices: cm2 $(tsj $D --vk-attn-cm 2 --vk-attn-slices 32)  one-pass $(tsj $D)  cm1 $(tsj $D --vk-attn-cm 1 --vk-attn-slices 32)"
done
echo "[${SECONDS}s] 8B d4096 64 slices: cm2 $(tsj $D --vk-attn-cm 2 --vk-attn-slices 64)  cm1 $(tsj $D --vk-attn-cm 1 --vk-attn-slices 64)  16: cm2 $(tsj $D --vk-attn-cm 2)"
