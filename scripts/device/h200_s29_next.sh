#!/bin/bash
# Prepared in session 28 for the next call (every call of session 28 got an H100): the
# selftest; attn_x32 against off on Qwen3-8B tg128 and the MoE (the H200 has not measured it);
# then the long context's shape space on the current kernels after 4,096 tokens (query heads a
# workgroup × slices, keys ahead), each once beside the defaults; then the three
# side-by-sides with llama.cpp's CUDA build (built beside from the start). About 9 minutes.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
ab "" "--vk-attn-x32 false" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "" "--vk-attn-x32 false" -m /tmp/moe.gguf -p 0 -n 128 -r 2
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D
for s in 32 64; do tps $Z $D --vk-attn-heads 4 --vk-attn-slices $s; done
tps $Z $D --vk-attn-ahead 8
tps $Z $D
llama_wait
vs_llama
