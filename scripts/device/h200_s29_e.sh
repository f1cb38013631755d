#!/bin/bash
# Session 29, sixth call: the final build (about 12 slices after 4,096 tokens by default)
# against 16 slices, alternating, on Qwen3-8B and the 30B-A3B; the selftest.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
gpu_selftest
wait_synth
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-slices 16; done
E="-m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $E; tps $Z $E --vk-attn-slices 16
