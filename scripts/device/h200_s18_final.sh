#!/bin/bash
# Session 18, sixth GPU call: llama.cpp's CUDA build (0c1e570, in the background, 12 jobs,
# niced) while this session's build (45928ad) alternates with its start ($ZINC_OLD, e596c6b) on
# Qwen3-30B-A3B and Qwen3-8B tg128; the selftest; then the five side-by-side tests.
export ZINC_OLD=.dev/zinc_old
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 12 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $ZINC_OLD $M; done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $ZINC_OLD $M; done
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
