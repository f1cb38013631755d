#!/bin/bash
# Session 17, third GPU call: this session's build (45e8e32 and the logits read without zeroing)
# against the session's start ($ZINC_OLD, f084bec), alternating, with no llama.cpp build beside
# them: Qwen3-30B-A3B tg128 (and this build with the router beside its norm off), Qwen3-8B
# tg128, Qwen3-8B tg64 after 4,096 tokens; the selftest first.
export ZINC_OLD=.dev/zinc_old
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $ZINC_OLD $M; tps $Z $M --vk-router-norm false; done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $ZINC_OLD $M; done
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $M; tps $ZINC_OLD $M; done
