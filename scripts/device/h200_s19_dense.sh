#!/bin/bash
# Session 19, sixth GPU call: the dense decode mat-vecs at 16 lanes a group of rows, as the
# experts now take: `zinc matvec-cost` on both files at the default shape and at 16x1x128, then
# Qwen3-30B-A3B tg128 at each, alternating.
. scripts/device/common.sh
synth
wait_synth
for f in moe q8b; do
  for s in "" 16x1x128; do
    timeout 40 $Z matvec-cost --backend vulkan -m /tmp/$f.gguf --rounds 100 ${s:+--vk-decode-kquant $s} > $OUT/mc-$f-${s:-default}.md 2>&1
    echo "== $f ${s:-default}: $(grep -E 'blk.0|rror' $OUT/mc-$f-${s:-default}.md | cut -d'|' -f4,8,11 | tr '\n' ' ')"
  done
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-decode-kquant 16x1x128; done
