#!/bin/bash
# Session 30, third call: llama.cpp's CUDA build beside; the selftest (the one-slice attention
# now in workgroups of 256); kernel shapes tuned on the H200 swept on the H100 (tg128, each
# setting alternating with the defaults, twice); then the three side-by-sides.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
# `sweep TEST -- OPTIONS…`: the defaults, then each setting (one word, commas for spaces), twice.
sweep() {
  local m="$1"; shift
  for i in 1 2; do
    tps $Z $m
    for o in "$@"; do tps $Z $m ${o//,/ }; done
  done
}
sweep "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" --vk-norm-wg,128 --vk-norm-wg,512 --vk-glu-rows-nr,2 \
  --vk-decode-kquant,32x1x128 --vk-attn-ahead,8 --vk-decode-q6k,32x1x256
sweep "-m /tmp/moe.gguf -p 0 -n 128 -r 2" --vk-norm-wg,128 --vk-norm-wg,512 --vk-router-wg,64
llama_wait
vs_llama
