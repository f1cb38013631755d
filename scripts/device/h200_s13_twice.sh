#!/bin/bash
# What each decode kernel takes on its own (`zinc bench --ablate --twice`: each kernel run
# twice in turn; the second run's cost is the kernel's, without the overlap of neighbours that
# leaving it out allows), and sweeps of the decode norm's workgroup and the Q6_K mat-vec's shape.
# About 7 minutes of device time. Needs $OUT, ZINC and .gl/ (common.sh).
. scripts/device/common.sh
synth
wait
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
tps $Z $M
for w in 256 512; do tps $Z $M --vk-norm-wg $w; done
for s in 64x1x256 16x1x128 64x1x128; do tps $Z $M --vk-decode-q6k $s; done
tps $Z $M --vk-decode-pieces 2
tps $Z $M
timeout 150 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --ablate --twice > $OUT/twice-8b.md 2>&1
grep -E "^\|" $OUT/twice-8b.md | head -18
timeout 200 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --ablate --twice > $OUT/twice-moe.md 2>&1
grep -E "^\|" $OUT/twice-moe.md | head -20
