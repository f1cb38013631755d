#!/bin/bash
# For session 46 (written in session 45, which got no device; carry .gl, .dev; ~6 min): the
# decode attention on cooperative matrices (`--vk-attn-cm true`, attn_dec_cm.comp), which has
# never run on a GPU. First its correctness: the GPU selftest's attention cases with it on
# (the decode cases over 700 to 4,100 keys take it: split slices of 32-, 64- and 128-wide heads
# of 2 to 8 query heads a KV head, windowed, with and without the q/k preparation), then the
# whole selftest. Then its speed whatever the selftest said (a wrong kernel that is also slow
# is not worth fixing): Qwen3-8B tg64 after 4,096 tokens at 16, 32 and 64 slices against the
# one-pass default, alternating, twice; after 1,024 tokens; Qwen3-30B-A3B (8 query heads a KV
# head) after 4,096 tokens; the driver's registers and shared memory for it (session 29's
# `attn_tile`, a KV head's query heads a workgroup through shared memory, lost for want of
# resident warps: one workgroup an SM at 16 slices); and the clock at 8B d4096 (its stage against
# docs/clock-h100-s44-8b-d4096.md's 21.75 µs for `attn_prep one-pass`). Last, session 44's
# pending checks of `--vk-attn-rows 2` (the selftest; the MoE after 4,096 tokens).
# Its log is `0log.txt`: run it as `bash scripts/device/h200_s45_a.sh 2>&1 | tee
# $OUT/0log.txt | tail -60` (at most 8 files come back, the first by name).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth; wait_8b
timeout 100 $Z selftest --backend vulkan --vk-attn-cm true --filter attention > $OUT/selftest-cm.md 2>&1
echo "selftest cm (attention) rc=$? $(tail -1 $OUT/selftest-cm.md)"
grep -iE "fail|error" $OUT/selftest-cm.md | head -8
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-cm true \
  --vk-pipeline-stats 2>&1 | grep -E "attn_dec" | head -3
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  echo "8B d4096: cm16 $(tsj $D --vk-attn-cm true)  cm32 $(tsj $D --vk-attn-cm true --vk-attn-slices 32)  cm64 $(tsj $D --vk-attn-cm true --vk-attn-slices 64)  one-pass $(tsj $D)"
done
echo "[${SECONDS}s] 8B d4096 done"
timeout 120 $Z selftest --backend vulkan --vk-attn-cm true > $OUT/selftest-cm-all.md 2>&1
echo "selftest cm (all) rc=$? $(tail -1 $OUT/selftest-cm-all.md)"
grep -iE "fail|error" $OUT/selftest-cm-all.md | head -5
D1="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024"
echo "8B d1024: cm16 $(tsj $D1 --vk-attn-cm true)  cm32 $(tsj $D1 --vk-attn-cm true --vk-attn-slices 32)  one-pass $(tsj $D1)"
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked cm $C --vk-attn-cm true
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096"
echo "MoE d4096: cm16 $(tsj $M --vk-attn-cm true)  cm32 $(tsj $M --vk-attn-cm true --vk-attn-slices 32)  one-pass $(tsj $M)  rows2 $(tsj $M --vk-attn-rows 2)"
echo "[${SECONDS}s] cm done"
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 2 > $OUT/selftest-rows2.md 2>&1
echo "selftest rows 2 rc=$? $(tail -1 $OUT/selftest-rows2.md)"; grep -i fail $OUT/selftest-rows2.md | head -5
echo "8B d4096: rows2 $(tsj $D --vk-attn-rows 2)  one-pass $(tsj $D)"
echo "[${SECONDS}s] done"
