#!/bin/bash
# Session 31, fifth call: llama.cpp's CUDA build beside; the selftest; while it builds, the
# Q4_K decode mat-vecs at one and at four 16-byte pieces a lane (the kernels' clock had the
# 8B's gate/up at ~2.2 TB/s with every workgroup running the whole stage: how the lanes meet
# memory, not latency; on the H100 never measured), alternating with the defaults; then the
# three side-by-sides.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M
  tps $Z $M --vk-decode-pieces 1
  tps $Z $M --vk-decode-pieces 4
done
timeout 150 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-clock \
  --vk-decode-pieces 1 2>&1 | grep -E "^(\||Where)" | head -8
llama_wait
vs_llama
