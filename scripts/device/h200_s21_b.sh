#!/bin/bash
# Session 21, second call: the first call's script (h200_s21_a.sh) again on PREP as its own
# compiled variant (attn_dec_prep.spv; attn_dec itself back to its old code), the raw keys and
# values in the push constants: selftest, the three decode tests against the build before
# ($ZINC_OLD) and with `--vk-fuse-prep false`, the short-context attention in workgroups of 256,
# profiles.
. scripts/device/common.sh
synth
gpu_selftest
wait_synth
ZINC_OLD=.dev/zinc_old decode_ab --vk-fuse-prep false
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  tps $Z $M --vk-attn-wg 256; tps $Z $M
done
for f in q8b moe; do
  timeout 60 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile > $OUT/profile-$f.txt 2>&1
done
grep -E "attn|qk_prep|norm_quant" $OUT/profile-q8b.txt | head -8
