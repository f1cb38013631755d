#!/bin/bash
# Session 21, first call: `zinc selftest --backend vulkan` (session 20's two-quanta bound for the
# gate/up's own rows, and the new prep_attention cases), then the decode attention preparing
# its own inputs (`--vk-fuse-prep`, default on: attn_dec.comp's PREP, qk_prep.comp left out of
# decode steps) against the build before it ($ZINC_OLD) and against itself with it off, on the
# three decode tests; the short-context attention's workgroups of 256 now that it does the
# prep's work too; a profile of each file's decode step.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
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
