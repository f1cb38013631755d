#!/bin/bash
# Prepared in session 28 for the next call (every call of session 28 got an H100): the
# selftest (and with `--vk-attn-tile`); attn_x32 against off on Qwen3-8B tg128 and the MoE (the
# H200 has not measured it); then after 4,096 tokens the split slices in tiles
# (`--vk-attn-tile`, session 28, never run on a GPU) against the default, alternating, and at 32
# and 8 and 64 slices; the current kernel with 8 keys ahead; then the three
# side-by-sides with llama.cpp's CUDA build (built beside from the start). About 9 minutes.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
echo "tile selftest: $(timeout 100 $Z selftest --backend vulkan --vk-attn-tile true 2>&1 | grep -E 'FAIL|cases' | head -5)"
wait_synth
ab "" "--vk-attn-x32 false" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "" "--vk-attn-x32 false" -m /tmp/moe.gguf -p 0 -n 128 -r 2
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
ab "" "--vk-attn-tile true" $D
tps $Z $D --vk-attn-tile true --vk-attn-slices 32
tps $Z $D --vk-attn-tile true --vk-attn-slices 8
tps $Z $D --vk-attn-tile true --vk-attn-slices 64
tps $Z $D --vk-attn-ahead 8
llama_wait
vs_llama
