#!/bin/bash
# Session 23, last call: llama.cpp's CUDA build (0c1e570, in the background, niced) while this
# session's build (the decode kernels of session 22; the values-with-keys attention tried in the
# first two calls is not kept) passes the selftest and runs the three decode tests, and the
# in-place merge of 8 slices after 4,096 tokens (`--vk-attn-merge true --vk-attn-slices 8`,
# no merge dispatch) against the default; then the three side-by-sides.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
decode_ab
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-merge true --vk-attn-slices 8; done
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
