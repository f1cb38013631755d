#!/bin/bash
# Session 19, second GPU call: whether a workgroup can hold a whole head's 128 rows of q and k
# (for the q/k norm, RoPE and cache store in the projection's own workgroup, no stage after it):
# `zinc matvec-cost` on both files at the default decode shape and at shapes of 128 rows a
# workgroup (32 lanes × 4 rows × 1,024 invocations; 16 × 2 × 1,024; 32 × 8 × 512) and 64.
. scripts/device/common.sh
synth
wait_synth
for f in moe q8b; do
  for s in "" "--vk-decode-kquant 32x4x1024" "--vk-decode-kquant 16x2x1024" "--vk-decode-kquant 32x8x512" "--vk-decode-kquant 32x2x1024" "--vk-decode-kquant 32x4x512"; do
    echo "== $f $s"
    timeout 60 $Z matvec-cost --backend vulkan -m /tmp/$f.gguf --rounds 200 $s 2>&1 | grep -E 'attn_(q|k)|error|Error' | cut -d'|' -f2,4,7,8,9,11
  done
done
