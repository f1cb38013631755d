#!/bin/bash
# Session 29, fourth call: split decode attention merged in place by its last workgroup
# (`--vk-attn-merge true`), now up to 16 slices and with its output in chunks of 32 for the
# K-quant out-projection (no attn_combine stage, no quantization stage), against the default
# (attn_combine) after 4,096 tokens, alternating; the selftest with it; Qwen3-8B tg128 as a check
# (one slice there: nothing changes).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
gpu_selftest
echo "merge selftest: $(timeout 100 $Z selftest --backend vulkan --vk-attn-merge true 2>&1 | grep -E 'FAIL|cases' | head -5)"
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2 3; do tps $Z $D; tps $Z $D --vk-attn-merge true; done
tps $Z $D --vk-attn-merge true --vk-attn-slices 8
tps $Z $D --vk-attn-merge true --vk-attn-slices 12
timeout 60 $Z bench --backend vulkan $D --vk-attn-merge true --profile 2>&1 | grep -E "attn|quant_act|^\| qwen" | head -8
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
tps $Z $T; tps $Z $T --vk-attn-merge true
