#!/bin/bash
# Session 30, fifth call: the one-pass attention over one slice by default (two passes over
# split slices): the selftest at the defaults, then alternating with two passes everywhere
# (`--vk-attn-one-pass false`): Qwen3-8B and Qwen3-30B-A3B tg128, and after 4,096 tokens
# (the same kernels both ways there).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
gpu_selftest
wait_synth
O="--vk-attn-one-pass false"
ab "" "$O" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "" "$O" -m /tmp/moe.gguf -p 0 -n 128 -r 2
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 $O
