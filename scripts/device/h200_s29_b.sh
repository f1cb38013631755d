#!/bin/bash
# Session 29, third call: the 30B-A3B's experts' gate/up (the largest kernel of its step by the
# ablation, 16.2 µs a layer for 14.2 MB) at other workgroup shapes, alternating with the
# default, and what the driver compiled the experts' kernels to.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M
  tps $Z $M --vk-glu-rows-nr 2
  tps $Z $M --vk-moe-lanes 8x8
  tps $Z $M --vk-moe-lanes 8x8 --vk-glu-rows-nr 2
  tps $Z $M --vk-moe-lanes 32x8 --vk-glu-rows-nr 2
done
timeout 90 $Z bench --backend vulkan $M --vk-pipeline-stats 2>&1 | grep -E "matvec|moe|attn|route" | head -20
