#!/bin/bash
# Session 16, fourth GPU call: quant8.glsl's block maximum and chunk sums through subgroup
# shuffles (two barriers a 256-value block where the shared-memory tree took nine; used by
# norm_quant, the attention's quantized output, the GLU tail, quant_act) against the build
# before it ($ZINC_OLD, the tree), alternating; then llama.cpp (built beside the A/B) against
# the new build on the three generation tests.
export ZINC_OLD=.dev/zinc_old
. scripts/device/common.sh
(build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2 3; do tps $Z $M; tps $ZINC_OLD $M; done
done
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $M; tps $ZINC_OLD $M; done
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
echo "== Qwen3-8B: generation 128"
$B -m /tmp/q8b.gguf -p 0 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 4300 --out $OUT/cuda-d4096
echo "== Qwen3-30B-A3B: generation 128"
$B -m /tmp/moe.gguf -p 0 -n 128 -r 2 --out $OUT/cuda-moe
