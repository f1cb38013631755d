#!/bin/bash
# Session 27, first call: what the decode norms bound and whether a residual mat-vec can hold
# 32 rows a workgroup (the shape a norm chunked by the producer's own rows needs) at no cost.
# `zinc matvec-cost` on Qwen3-8B at the default shapes and at 32 rows a workgroup (32x1x1024,
# 32x4x256, 32x8x128, 16x2x256 for every K-quant weight); then tg128 at the defaults, without
# the norms (`--vk-skip norm_quant`, timing only), without the attention (`--vk-skip attn_prep`,
# timing only) and with the counter-based deferred norms (`--vk-fuse-norm true`), twice each in
# turn, on both files; a profile of the 8B.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth
M8="-m /tmp/q8b.gguf"
for S in "" 32x1x1024 32x4x256 32x8x128 16x2x256; do
  A=""; [ -n "$S" ] && A="--vk-decode-kquant $S --vk-decode-q6k $S"
  echo "== matvec-cost ${S:-default}"
  timeout 120 $Z matvec-cost --backend vulkan $M8 $A 2>&1 | grep -E '^\| (blk|output)' | awk -F'|' '{print $2 $4 $7 $8 $10}'
done
T="$M8 -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $T; tps $Z $T --vk-skip norm_quant; tps $Z $T --vk-skip attn_prep; tps $Z $T --vk-fuse-norm true
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --vk-skip norm_quant; tps $Z $M --vk-fuse-norm true
done
timeout 120 $Z bench --backend vulkan $M8 -p 0 -n 32 -r 1 --profile > $OUT/profile8b.txt 2>&1
timeout 120 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/profilemoe.txt 2>&1
grep -A40 -i "kernel" $OUT/profile8b.txt | head -45
