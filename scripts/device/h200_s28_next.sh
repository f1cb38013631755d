#!/bin/bash
# Prepared in session 27 for the next H200 call (session 27's second call got an H100): the
# selftest, RoPE's table from the host (`--vk-attn-rope-table`, on) against the kernels' own
# angles on Qwen3-8B tg128, after 4,096 tokens and the MoE, alternating; the attention's parts
# (`--vk-attn-ablate`, timing only) on the H200; then the three side-by-sides with llama.cpp's
# CUDA build (built beside from the start).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $T; tps $Z $T --vk-attn-rope-table false; done
for a in 2 4 8 31; do tps $Z $T --vk-attn-ablate $a; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-rope-table false; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D; tps $Z $D --vk-attn-rope-table false
llama_wait
vs_llama
