#!/bin/bash
# Session 28, last call: the final build at its defaults (the f16 prompt copies now half of an
# 80 GB card): the MoE's prompt, then Qwen3-8B tg128 and tg64 after 4,096 tokens.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth; wait_synth
pp() { echo "== $*: $(timeout 120 $Z bench --backend vulkan "$@" 2>&1 | grep -E '^\| qwen' | awk -F'|' '{print $(NF-1)}')"; }
pp -m /tmp/moe.gguf -p 512 -n 0 -r 2
tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
