#!/bin/bash
# Session 20, third GPU call: llama.cpp's CUDA build (0c1e570, in the background, niced) while
# this session's defaults (the gate and up quantizing their own rows, the experts' at one row a
# group) pass the selftest and are profiled on both files; then the three side-by-sides.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
for f in q8b moe; do
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-$f.txt 2>&1
done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-glu-rows false; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-glu-rows false; done
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
