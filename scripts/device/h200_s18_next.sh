#!/bin/bash
# Prepared in session 18 after its device time was spent (run it first next session): the
# selftest on the build, then the router that routes in workgroups of 128 (an expert an
# invocation in the ranking, `--vk-router-wg 128`) against 64, alternating, Qwen3-30B-A3B
# tg128, and the ranking's remaining cost at each (`--vk-router-stop 3`, timing only); then
# `zinc sync-cost` for what recording a command costs the host, by its parts.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M --vk-router-wg 64; tps $Z $M --vk-router-wg 128; done
tps $Z $M --vk-router-wg 64 --vk-router-stop 3; tps $Z $M --vk-router-wg 128 --vk-router-stop 3
$Z sync-cost --backend vulkan --groups 1,132
