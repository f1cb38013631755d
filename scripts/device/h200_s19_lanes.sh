#!/bin/bash
# Session 19, fourth GPU call: the MoE experts' down-projection at 8 lanes a group of rows
# (`--vk-moe-lanes 32x8`, the third call's best), with two rows a group (`--vk-moe-rows 2`) and
# with 16 lanes for gate and up, against the defaults, alternating, Qwen3-30B-A3B tg128.
. scripts/device/common.sh
synth
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do
  tps $Z $M; tps $Z $M --vk-moe-lanes 32x8; tps $Z $M --vk-moe-lanes 32x8 --vk-moe-rows 2; tps $Z $M --vk-moe-lanes 16x8
done
