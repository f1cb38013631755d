#!/bin/bash
# Session 22, one GPU call: llama.cpp's CUDA build (0c1e570, in the background, niced) while this
# session's build (Q6_K weights in groups of eight blocks, 210 bytes a block instead of 224) passes
# the selftest, times each decode mat-vec shape against the build before ($ZINC_OLD,
# `zinc matvec-cost`), and is measured against it alternating (Qwen3-8B tg128, tg64 after 4,096
# tokens, Qwen3-30B-A3B tg128); then the three side-by-sides.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
export ZINC_OLD=.dev/zinc_old
for b in $Z $ZINC_OLD; do
  echo "== matvec-cost $b"
  timeout 60 $b matvec-cost --backend vulkan -m /tmp/q8b.gguf --rounds 200 2>&1 | tail -12
done
decode_ab
[ -e $OUT/llama-done ] || decode_ab # a second round while llama.cpp still builds
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
