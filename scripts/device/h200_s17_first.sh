#!/bin/bash
# Session 17, first GPU call: fewer barriers inside kernels — rms.glsl's subgroup sums paired by
# shuffles after one barrier (norm_quant, qk_prep, rms_norm; four barriers at 256 invocations
# before), qk_prep's RoPE in registers (one barrier where two), attn_dec's subgroups' value sums
# added at once (two barriers where one a subgroup) and its 1 / l kept from the softmax, the F32
# mat-vec's (the MoE router's) row sums by shuffles below the subgroup's width — against the build
# before ($ZINC_OLD, f084bec), alternating; profiles of both on the
# MoE; then llama.cpp (built beside the A/B) against the new build on the five side-by-side tests.
export ZINC_OLD=.dev/zinc_old
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 12 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2 3; do tps $Z $M; tps $ZINC_OLD $M; done
done
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $M; tps $ZINC_OLD $M; done
for b in $Z $ZINC_OLD; do
  echo "== profile $b"
  timeout 60 $b bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile 2>&1 | tail -40
done
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
