#!/bin/bash
# Session 40, one call (carry .gl, .dev, .lsrc): the new piece defaults (8x512 growing 4×,
# adaptive) against the earlier ones (8x64 growing 2×, not adaptive) and two larger forms,
# alternating on one build — Qwen3-8B tg128, tg64 after 4,096 tokens, Qwen3-30B-A3B tg128 —
# then llama.cpp's CUDA build (nothing beside it) and the three side-by-sides of
# h200_cuda_vs_llama.sh at the defaults; the build packed into $OUT for a later call (.lbin/).
# Back: the log (tee'd by the caller into $OUT), the three bench.json files, the build's parts.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_8b
OLD="--vk-chunks 8x64 --vk-chunk-growth 2 --vk-chunk-adaptive false"
for i in 1 2; do
  for o in "" "$OLD" "--vk-chunks 16x512" "--vk-chunks 8x1024 --vk-chunk-growth 8"; do
    tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2 $o
  done
done
wait_synth
for M in "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do
    for o in "" "$OLD" "--vk-chunks 8x1024 --vk-chunk-growth 8"; do tps $Z $M $o; done
  done
done
echo "[${SECONDS}s] A/B done"
build_llama 16
echo "[${SECONDS}s] built"
tar -C $LCU -cf - build/bin | xz -T16 -3 | split -b 15M - $R/llama-bin.txz.
ls -la $R; echo "[${SECONDS}s] packed"
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
echo "[${SECONDS}s] side-by-side done"
