#!/bin/bash
# Prepared at the end of session 19 (its device time spent; run it first next session, ~8 of a
# call's 10 minutes): the selftest; profiles of both files at the session's defaults (the experts
# at 16x8 lanes, the router in workgroups of 128); what the gated activation's tail costs — the
# bound on a gate/up that quantizes its own rows — as a stage of its own (`--vk-fuse-glu false`)
# and left out (`--vk-skip glu_quant`, timing only, results wrong); then the gate and up
# quantizing their own rows (`--vk-glu-rows true`, new, off by default: no tail) against the
# defaults, alternating, on Qwen3-30B-A3B and Qwen3-8B tg128, with a profile each.
# `h200_s19_next2.sh` holds the rest of what session 19 left to measure.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
wait_synth
gpu_selftest
for f in moe q8b; do
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-$f.txt 2>&1
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do
    tps $Z $M; tps $Z $M --vk-fuse-glu false; tps $Z $M --vk-fuse-glu false --vk-skip glu_quant
  done
  for i in 1 2 3; do tps $Z $M; tps $Z $M --vk-glu-rows true; done
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile --vk-glu-rows true > $OUT/prof-$f-rows.txt 2>&1
done
