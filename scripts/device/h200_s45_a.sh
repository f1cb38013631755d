#!/bin/bash
# For session 46 (written in session 45, which got no device; carry .gl, .dev; ~5 min): the
# decode attention on cooperative matrices (`--vk-attn-cm 1` and `2`, attn_dec_cm.comp's two
# forms), which has never run on a GPU. First its correctness: the GPU selftest's attention
# cases with each form on (the decode cases over 700 to 4,100 keys take it: split slices of
# 32-, 64- and 128-wide heads of 2 to 8 query heads a KV head, windowed, with and without the
# q/k preparation), and the driver's registers and shared memory for it (session 29's
# `attn_tile`, a KV head's query heads a workgroup through shared memory, lost for want of
# resident warps: one workgroup an SM at 16 slices). Then its speed whatever the selftest said
# (a wrong kernel that is also slow is not worth fixing): Qwen3-8B tg64 after 4,096 tokens,
# each form at 16, 32 and 64 slices against the one-pass default, alternating, twice; and both
# forms' clocks at 32 slices (the stage against docs/clock-h100-s44-8b-d4096.md's 21.75 µs for
# `attn_prep one-pass`). `h200_s45_b.sh` is the rest: 1,024 tokens, the MoE, the whole
# selftest with each form, and session 44's pending checks of `--vk-attn-rows 2`.
# Its log is `0log.txt`: run it as `bash scripts/device/h200_s45_a.sh 2>&1 | tee
# $OUT/0log.txt | tail -60` (at most 8 files come back, the first by name: here the log and
# the two clocks' reports and stages).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth; wait_8b
for f in 1 2; do
  timeout 100 $Z selftest --backend vulkan --vk-attn-cm $f --filter attention > /tmp/selftest-cm$f.md 2>&1
  echo "selftest cm $f (attention) rc=$? $(tail -1 /tmp/selftest-cm$f.md)"
  grep -iE "fail|error" /tmp/selftest-cm$f.md | head -6
  timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-cm $f \
    --vk-pipeline-stats 2>&1 | grep -E "attn_dec" | head -3
done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  for f in 1 2; do
    echo "8B d4096 cm $f: 16 slices $(tsj $D --vk-attn-cm $f)  32 $(tsj $D --vk-attn-cm $f --vk-attn-slices 32)  64 $(tsj $D --vk-attn-cm $f --vk-attn-slices 64)"
  done
  echo "8B d4096 one-pass: $(tsj $D)"
done
echo "[${SECONDS}s] 8B d4096 done"
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked cm1 $C --vk-attn-cm 1 --vk-attn-slices 32
clocked cm2 $C --vk-attn-cm 2 --vk-attn-slices 32
echo "[${SECONDS}s] done"
