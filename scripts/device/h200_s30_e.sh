#!/bin/bash
# Session 30, sixth call (the last ~5 minutes of device time): after 4,096 tokens, the one-pass
# attention over split slices at 2 keys ahead (its registers under the 512 workgroups' limit?)
# against the defaults (two passes there) and at 4 ahead; register counts.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  tps $Z $D
  tps $Z $D --vk-attn-one-pass true --vk-attn-ahead 2
  tps $Z $D --vk-attn-one-pass true
done
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 4096 --vk-attn-one-pass true \
  --vk-attn-ahead 2 --vk-pipeline-stats 2>&1 | grep -E "attn_dec"
