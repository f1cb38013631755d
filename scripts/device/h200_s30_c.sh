#!/bin/bash
# Session 30, fourth call: the decode attention's keys and values in one pass
# (`--vk-attn-one-pass`, new: a running softmax a key slot, each value loaded with its key):
# the selftest with it on, register counts, then alternating with the default (two passes):
# Qwen3-8B tg128, tg64 after 4,096 tokens, Qwen3-30B-A3B tg128.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
timeout 100 $Z selftest --backend vulkan --vk-attn-one-pass true > $OUT/selftest-one.md 2>&1
echo "selftest (one pass) rc=$? $(tail -1 $OUT/selftest-one.md)"; grep -i fail $OUT/selftest-one.md | head -5
wait_synth
O="--vk-attn-one-pass true"
ab "" "$O" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "" "$O" -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
ab "" "$O" -m /tmp/moe.gguf -p 0 -n 128 -r 2
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 4096 $O --vk-pipeline-stats 2>&1 \
  | grep -E "attn_dec"
