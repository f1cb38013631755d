#!/bin/bash
# Decode mat-vec shapes by workgroup count: `zinc bench --ablate --twice` found Qwen3-30B-A3B's
# q-projection (4,096 rows × 2,048) taking 10.4 µs a call against 3.7 for its o-projection
# (2,048 × 4,096, the same bytes, half the workgroups): whether 1,024 workgroups of 128
# invocations take two waves of the H200. Shapes for every K-quant mat-vec (`--vk-decode-kquant
# LANESxROWSxWG`), both files. About 6 minutes. Needs $OUT, ZINC and .gl/ (common.sh).
. scripts/device/common.sh
synth
wait
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
tps $Z $M
for s in 32x1x256 32x2x128 32x1x512 32x2x256 64x1x256; do tps $Z $M --vk-decode-kquant $s; done
tps $Z $M
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
tps $Z $M
for s in 32x1x256 32x2x128 32x1x512; do tps $Z $M --vk-decode-kquant $s; done
tps $Z $M --vk-norm-wg 256
tps $Z $M
