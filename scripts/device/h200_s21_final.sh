#!/bin/bash
# Session 21, fourth GPU call: llama.cpp's CUDA build (0c1e570, in the background, niced) while
# this session's defaults (the decode attention preparing its own inputs) pass the selftest, are
# profiled on both files and measured against the build before the session ($ZINC_OLD) and with
# `--vk-fuse-prep false`, the shortest direct attention (`--vk-attn-direct 64`) once more on the
# MoE; then the three side-by-sides.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
for f in q8b moe; do
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-$f.txt 2>&1
done
ZO=.dev/zinc_old
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do tps $Z $M; tps $ZO $M; tps $Z $M --vk-fuse-prep false; done
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
tps $Z $M --vk-attn-direct 64; tps $Z $M
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
