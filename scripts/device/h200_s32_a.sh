#!/bin/bash
# Session 32, first call: the GPU selftest at session 31's attention default (not run on a GPU
# then); after 4,096 tokens the split attention's forms that exist as options (query heads a
# workgroup × slices, one pass in workgroups of 128), each alternating with the defaults; the
# clock with the split attention's marks after 4,096 tokens and the MoE router's new marks
# (2 products, 3 counted and last, 4 ranked, 5 picks written).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
gpu_selftest
wait_synth
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  tps $Z $D
  tps $Z $D --vk-attn-heads 4
  tps $Z $D --vk-attn-heads 4 --vk-attn-slices 32
  tps $Z $D --vk-attn-heads 4 --vk-attn-slices 64
  tps $Z $D --vk-attn-heads 2 --vk-attn-slices 32
  tps $Z $D --vk-attn-heads 1 --vk-attn-slices 8
done
clocked d4096 $D
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
clocked q8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
