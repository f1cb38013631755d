#!/bin/bash
# Session 28, fifth call (an H100 so far this session): the MoE's prompt with more f16 expert
# copies kept (`--vk-prompt-cache-mb`; the default is a quarter of memory below 96 GiB, 20 GiB
# here, where the 30B-A3B's experts take ~54 GiB in f16), alternating with the default.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
P="-m /tmp/moe.gguf -p 512 -n 0 -r 2"
pp() { echo "== $*: $(timeout 120 $Z bench --backend vulkan "$@" 2>&1 | grep -E '^\| qwen' | awk -F'|' '{print $(NF-1)}')"; }
for i in 1 2; do pp $P; pp $P --vk-prompt-cache-mb 40960; done
pp $P --vk-prompt-cache-mb 56320
