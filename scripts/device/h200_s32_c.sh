#!/bin/bash
# Session 32, the A/B alone (device time left for no llama.cpp build): this session's three
# decode changes — the MoE router's ranking by one subgroup, the router recorded before its
# norm, q and k in one dispatch — each alone off against all on, alternating; the clock; the
# driver's pipeline statistics; RMS_BATCH 16 (.dev/zinc_b) against 8; the GPU selftest.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
gpu_selftest
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
Q="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  tps $Z $M
  tps $Z $M --vk-route-subgroup false
  tps $Z $M --vk-router-first false
  tps $Z $M --vk-decode-two false
  tps $Z $M --vk-route-subgroup false --vk-router-first false --vk-decode-two false
  tps $Z $Q
  tps $Z $Q --vk-decode-two false
  tps .dev/zinc_b $Q
done
tps $Z $D; tps $Z $D --vk-decode-two false
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
clocked q8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats > $OUT/stats.txt 2>&1
grep -i -E "attn_prep|norm_quant|matvec_dec_Q4_K|shared" $OUT/stats.txt | head -12
