#!/bin/bash
# Session 31, fourth call. (1) The q, k, v projections recorded q, v, k (.dev/zinc-qvk): in
# the kernels' clock a stage's second and third dispatches started ~0.9 and ~1.9 µs after its
# first, and v (Q6_K) is the slower of the two small ones. (2) The MoE experts' gate/up with
# both passes' loads in flight in workgroups that still fit one wave: two rows a group of 16
# lanes (256 invocations), 2 passes; against the defaults (one row, 512 invocations, 1 pass).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do tps $Z $M; tps .dev/zinc-qvk $M; done
done
E="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $E
  tps $Z $E --vk-glu-rows-nr 2 --vk-moe-passes 2x1
  tps $Z $E --vk-glu-rows-nr 4 --vk-moe-passes 2x1
done
tps $Z $E --vk-glu-rows-nr 2
timeout 60 $Z bench --backend vulkan $E --vk-glu-rows-nr 2 --vk-moe-passes 2x1 -n 4 -r 1 \
  --vk-pipeline-stats 2>&1 | grep -E "matvec_dec" | head -8
timeout 150 .dev/zinc-qvk bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-clock \
  --clock-out $OUT/clock-8b-qvk.json 2>&1 | grep -E "^(\||Where)" | head -6
timeout 150 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 16 -r 1 --vk-clock \
  --vk-glu-rows-nr 2 --vk-moe-passes 2x1 2>&1 | grep -E "^(\||Where)" | head -6
