#!/bin/bash
# Session 29, second call: where a decode step's time goes now (the H100 has no such record):
# `zinc bench --ablate` (each kernel left out in turn; timing only) on Qwen3-8B tg64 and the
# 30B-A3B tg64, then profiles after 4,096 tokens with the split slices in tiles
# (`--vk-attn-tile`, 11% slower in the first call) against the default, with what the driver
# compiled the attention kernels to.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth; wait_synth
for M in /tmp/q8b.gguf /tmp/moe.gguf; do
  timeout 150 $Z bench --backend vulkan -m $M -p 0 -n 64 -r 2 --ablate 2>&1 | grep -v '^zinc bench' | tail -40
done
for T in false true; do
  echo "== tile $T"
  timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 -d 4096 --vk-attn-tile $T \
    --profile --vk-pipeline-stats 2>&1 | grep -E "attn|matvec_dec|norm|^\| qwen|busy" | head -24
done
