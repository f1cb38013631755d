#!/bin/bash
# Session 39's second call: the prefetcher's queue from the compute-only family (NVIDIA's async
# compute) — whether it runs beside the main queue at all (the first call's second queue of
# the main family did not: 6.1 tok/s, each step waiting for the prefetcher's polls to run out).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
vulkaninfo 2>/dev/null | grep -E "queueCount|queueFlags" | head -12
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
T="-m /tmp/q8b.gguf -p 0 -n 32 -r 1"
tps $Z $T
tps $Z $T --vk-prefetch 16
tps $Z $T --vk-prefetch 0
echo "[${SECONDS}s] done"
