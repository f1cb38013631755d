#!/bin/bash
# Session 30, second call: the MoE experts' passes (`--vk-moe-passes GATEUPxDOWN`, new: every
# pass's loads of a row issued before the math; a 30B-A3B gate/up row is two passes at 16 lanes,
# its down's three at 8) against the default, and the short-context attention in workgroups of
# 256 (one head a workgroup since session 28), alternating, tg128.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M
  tps $Z $M --vk-moe-passes 2x1
  tps $Z $M --vk-moe-passes 1x4
  tps $Z $M --vk-moe-passes 2x4
done
tps $Z $M --vk-attn-wg 256
tps $Z $M
timeout 60 $Z bench --backend vulkan $M --vk-moe-passes 2x4 --vk-pipeline-stats 2>&1 | grep -E "matvec_dec"
D="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
ab "" "--vk-attn-wg 256" $D
