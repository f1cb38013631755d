#!/bin/bash
# Session 31, sixth call: after 4,096 tokens the split attention is the 8B's third stage by the
# clock (span 17.9 µs, workgroups 15.7 µs: its keys' passes then its values' passes, one trip to
# memory after another) and attn_combine 4.8 µs more. Forms that exist as options, each
# alternating with the defaults: one pass in workgroups of 128 (its 78 registers let all 512
# workgroups stay resident, which at 256 they did not), with 8 keys ahead, at 32 slices, merged
# in place; and one pass in workgroups of 256 at 8 slices (256 workgroups).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
O="--vk-attn-one-pass true"
for i in 1 2; do
  tps $Z $D
  tps $Z $D $O --vk-attn-wg 128
  tps $Z $D $O --vk-attn-wg 128 --vk-attn-ahead 8
  tps $Z $D $O --vk-attn-wg 128 --vk-attn-slices 32
  tps $Z $D $O --vk-attn-wg 128 --vk-attn-merge true
  tps $Z $D $O --vk-attn-slices 8
done
