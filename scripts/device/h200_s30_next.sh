#!/bin/bash
# Prepared in session 29 for the next call (all of session 29's calls got an H100): the
# selftest; on an H200 only, attn_x32 (session 28) against off on Qwen3-8B and the MoE (never
# measured there); after 4,096 tokens the in-place merge in chunks of 32 at 8 slices against the
# default; the driver's register counts of the attention and the mat-vecs (a dead path's shared
# array cost 7% in session 29: check them against session 29's 47 for attn_dec_prep); then the
# three side-by-sides with llama.cpp's CUDA build (built beside from the start). About 9 minutes.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  ab "" "--vk-attn-x32 false" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
  ab "" "--vk-attn-x32 false" -m /tmp/moe.gguf -p 0 -n 128 -r 2
fi
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
ab "" "--vk-attn-merge true --vk-attn-slices 8" $D
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 4096 --vk-pipeline-stats 2>&1 \
  | grep -E "attn_dec|matvec_dec|norm_quant"
llama_wait
vs_llama
