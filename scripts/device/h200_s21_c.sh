#!/bin/bash
# Session 21, third call: the decode attention's shape now that it prepares its own inputs —
# the longest context taken in one slice (`--vk-attn-direct`: 64, 128 the default, 256) on both
# files' tg128, and the slices after 4,096 tokens (`--vk-attn-slices` 8 and 32 against 16) and
# query heads a workgroup there (`--vk-attn-heads 2`); the selftest on this build (Gemma 3's
# pre-scale in the prep).
. scripts/device/common.sh
synth
gpu_selftest
wait_synth
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-direct 64; tps $Z $M --vk-attn-direct 256; done
done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-slices 8; tps $Z $D --vk-attn-slices 32; done
tps $Z $D --vk-attn-heads 2
