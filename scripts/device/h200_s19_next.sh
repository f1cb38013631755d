#!/bin/bash
# Prepared at the end of session 19 (its device time spent; run it first next session): the
# selftest; profiles of both files at the session's defaults (the experts at 16x8 lanes, the
# router in workgroups of 128), for what a layer's stages cost now; the short-context attention
# in workgroups of 256 (`--vk-attn-wg 256`, one direct slice a workgroup; last measured before
# the direct slices existed) and the first piece of 4 commands (`--vk-chunks 4x64`, the host's
# gap) against the defaults, alternating, on Qwen3-30B-A3B and Qwen3-8B tg128; and what the
# gated activation's tail costs, its bound for a gate/up that quantizes its own rows (session
# 19's note): the activation as a stage of its own (`--vk-fuse-glu false`) and left out
# (`--vk-skip glu_quant`, timing only, results wrong); the experts' gate/up workgroups of 64 and
# 256 (`--vk-moe-wg`, new, default 128) on Qwen3-30B-A3B; and `zinc sync-cost`'s round trip
# (new: the host's submit of one command buffer, and the wait for its fence); and the gate and
# up quantizing their own rows (`--vk-glu-rows true`, new, off by default: no tail; the bound
# above says what it can win) on both files, with a profile each.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
wait_synth
gpu_selftest
timeout 90 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.txt 2>&1
timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.txt 2>&1
for f in moe q8b; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-wg 256; tps $Z $M --vk-chunks 4x64; done
  for i in 1 2; do
    tps $Z $M; tps $Z $M --vk-fuse-glu false; tps $Z $M --vk-fuse-glu false --vk-skip glu_quant
  done
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-moe-wg 64; tps $Z $M --vk-moe-wg 256; done
$Z sync-cost --backend vulkan --groups 1
for f in moe q8b; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2 3; do tps $Z $M; tps $Z $M --vk-glu-rows true; done
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile --vk-glu-rows true > $OUT/prof-$f-rows.txt 2>&1
done
