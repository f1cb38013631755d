#!/bin/bash
# Prepared in session 30 for the next call (all of session 30's calls got an H100): the
# selftest; session 30's two attention defaults — the one-slice decode attention in workgroups
# of 256 and in one pass — each against its old form (`--vk-attn-wg 128` is the old rule at
# tg128, where every step is one slice; `--vk-attn-one-pass false`), alternating, on Qwen3-8B and
# the MoE (on an H200 they were never measured); then the three side-by-sides with llama.cpp's
# CUDA build (built beside from the start); after 4,096 tokens, one pass over split slices in
# workgroups of 128. About 9 minutes.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do
    tps $Z $M
    tps $Z $M --vk-attn-wg 128
    tps $Z $M --vk-attn-one-pass false
  done
done
# After 4,096 tokens: one pass over split slices in workgroups of 128 (78 registers × 128: all
# 512 workgroups resident, where 256 left them two waves; session 30 measured 256 only).
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
ab "" "--vk-attn-one-pass true --vk-attn-wg 128" $D
llama_wait
vs_llama
