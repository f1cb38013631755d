#!/bin/bash
# Session 19, fifth GPU call: llama.cpp's CUDA build (0c1e570, in the background, 12 jobs,
# niced) while this session's build (c8d9bd5: the router in workgroups of 128, the MoE experts
# at 16 lanes for gate and up and 8 for the down) alternates with other expert lanes on
# Qwen3-30B-A3B tg128 and `zinc matvec-cost` times the dense weights at fewer lanes; the
# selftest; then the five side-by-side tests.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 12 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $Z $M --vk-moe-lanes 8x8; tps $Z $M --vk-moe-lanes 16x8 --vk-moe-rows 2; done
for f in moe q8b; do
  for s in "" 16x1x128 16x2x128 8x1x128; do
    echo "== $f $s: $(timeout 60 $Z matvec-cost --backend vulkan -m /tmp/$f.gguf --rounds 100 ${s:+--vk-decode-kquant $s} 2>&1 | grep -E 'blk.0|rror' | cut -d'|' -f2,4,7 | tr '\n' ' ')"
  done
done
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
