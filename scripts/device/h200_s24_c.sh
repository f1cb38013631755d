#!/bin/bash
# Session 24, third call: the decode mat-vec shapes again at today's kernels. `zinc matvec-cost`
# (every distinct Q4_K/Q6_K weight of Qwen3-8B as a dependent stage, against a read of its
# bytes) at the default shape and at other Q6_K (`--vk-decode-q6k`) and Q4_K
# (`--vk-decode-kquant`, which also sets the gate/up's lanes) shapes, then Qwen3-8B tg128
# alternating the default with the Q6_K shapes.
. scripts/device/common.sh
[ -e /tmp/q8b.gguf ] || { synth; wait_synth; }
for o in "" "--vk-decode-q6k 64x1x128" "--vk-decode-q6k 32x2x128" "--vk-decode-q6k 16x1x128" \
  "--vk-decode-q6k 32x1x256" "--vk-decode-kquant 64x1x128" "--vk-decode-kquant 32x2x256"; do
  echo "== matvec-cost $o"
  timeout 90 $Z matvec-cost --backend vulkan -m /tmp/q8b.gguf $o 2>&1 | grep "^| [a-z]" | grep -v "^| weight" | cut -d'|' -f2,4,7,8,10,12
done
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $T
  for s in 64x1x128 32x2x128 16x1x128; do tps $Z $T --vk-decode-q6k $s; done
done
