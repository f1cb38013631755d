#!/bin/bash
# Session 31, second call: the kernels' clock with marks inside the attention, the mat-vecs and
# the norm (CLK_MARK: where a workgroup's time goes between its start and its end), on
# Qwen3-8B and Qwen3-30B-A3B.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth
clocked 8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
