#!/bin/bash
# Session 31, first call: where a decode step's time goes by the kernels' own clock (`zinc bench
# --vk-clock`, new: each workgroup's start and end on the device's clock), on Qwen3-8B at depth
# 0 and after 4,096 tokens and on Qwen3-30B-A3B; a plain run of each beside it, to see what the
# instrumentation costs.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth
tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2
clocked 8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
tps $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
tps $Z -m /tmp/q8b.gguf -p 0 -n 32 -r 1 -d 4096
clocked 8b-d4096 -m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096
ls -la $OUT
