#!/bin/bash
# Session 24, last call: llama.cpp's CUDA build (0c1e570, in the background, niced) while this
# session's build (session 23's kernels; the in-dispatch FFN norm of the first two calls is not
# kept; Q6_K output heads at two rows a group of lanes) passes the selftest, `zinc matvec-cost`
# times the heads (at the default and at four rows, `--vk-decode-q6k 32x4x128`), and the
# default runs against one row a group for every Q6_K weight (`--vk-decode-q6k 32x1x128`, the
# build before), alternating; then the three side-by-sides at the defaults.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
llama_beside
synth
wait_synth
gpu_selftest
for m in q8b moe; do
  for o in "" "--vk-decode-q6k 32x4x128"; do
    echo "== matvec-cost $m $o"
    timeout 60 $Z matvec-cost --backend vulkan -m /tmp/$m.gguf $o 2>&1 | grep "^| output" | cut -d'|' -f2,4,7,8,10,12
  done
done
O="--vk-decode-q6k 32x1x128"
ab "" "$O" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "" "$O" -m /tmp/moe.gguf -p 0 -n 128 -r 2
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096; tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 $O
llama_wait
vs_llama
