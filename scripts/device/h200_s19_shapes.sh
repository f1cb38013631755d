#!/bin/bash
# Session 19, third GPU call: the selftest at the new defaults (the router in workgroups of
# 128); the output heads' decode shape (`--vk-decode-head`, new) by `zinc matvec-cost`; the MoE
# experts' lanes a group of rows (`--vk-moe-lanes GATEUPxDOWN`, new) on Qwen3-30B-A3B tg128,
# alternating with the defaults.
. scripts/device/common.sh
synth
wait_synth
gpu_selftest
for f in moe q8b; do
  for s in "" 16x1x128 64x1x128 32x1x64 16x2x128 8x1x128 16x1x256 32x1x512; do
    echo "== $f head $s: $(timeout 60 $Z matvec-cost --backend vulkan -m /tmp/$f.gguf --rounds 100 ${s:+--vk-decode-head $s} 2>&1 | grep -E '^\| output|rror' | cut -d'|' -f4,7,8,9,11 | tr '\n' ' ')"
  done
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for l in 32x16 32x8 16x32 8x32 16x16 32x32; do tps $Z $M; tps $Z $M --vk-moe-lanes $l; done
