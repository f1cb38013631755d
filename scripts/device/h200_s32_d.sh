#!/bin/bash
# Session 32, last call: the MoE ranking by one subgroup again, its lanes' virtual subgroups now
# a specialization constant (the first form, at a run-time count, took 12 µs to rank), against
# the workgroup's ranking, alternating; its clock; the GPU selftest.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
gpu_selftest
wait
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $Z $M --vk-route-subgroup false; done
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
