#!/bin/bash
# Session 32, second call: the MoE router's two changes (the ranking by one subgroup, the
# router recorded before its norm), each alone off against both on, alternating; the clock with
# the router's marks; RMS_BATCH 16 (.dev/zinc_b: a 4,096-wide norm's loads in one batch)
# against 8; more forms of the split attention after 4,096 tokens; the GPU selftest.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
gpu_selftest
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M
  tps $Z $M --vk-route-subgroup false
  tps $Z $M --vk-router-first false
  tps $Z $M --vk-route-subgroup false --vk-router-first false
done
clocked moe $M
Q="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $Q; tps .dev/zinc_b $Q; tps $Z $M; tps .dev/zinc_b $M; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  tps $Z $D
  tps $Z $D --vk-attn-heads 4 --vk-attn-wg 256
  tps $Z $D --vk-attn-heads 4 --vk-attn-wg 256 --vk-attn-ahead 8
  tps $Z $D --vk-attn-heads 2
  tps $Z $D --vk-attn-heads 2 --vk-attn-wg 256
done
