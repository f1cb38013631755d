#!/bin/bash
# Session 32, last call: with the workgroup's ranking back as the default, the router recorded
# before its norm and q and k in one dispatch each alone off against both on, alternating.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --vk-router-first false; tps $Z $M --vk-decode-two false
  tps $Z $M --vk-router-first false --vk-decode-two false
done
