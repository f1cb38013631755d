#!/bin/bash
# Session 20, first call after h200_s19_next.sh: the gate and up quantizing their own rows
# now on by default for dense FFNs (so the 8B's defaults include them), against reads ahead of
# the next weights beside the small stages (`--vk-prefetch MB`, new) at 8, 16 and 32 MB on
# Qwen3-8B tg128 and after 4,096 tokens; the gate/up rows a group (`--vk-glu-rows-nr`, new)
# for the dense FFNs and for the experts (where four rows measured 9% slower); and
# h200_s19_next2.sh's attention workgroups, first piece and expert workgroups.
. scripts/device/common.sh
synth
wait_synth
gpu_selftest
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --vk-prefetch 8; tps $Z $M --vk-prefetch 16; tps $Z $M --vk-prefetch 32
done
for i in 1 2; do tps $Z $M --vk-glu-rows-nr 2; tps $Z $M --vk-glu-rows-nr 1; done
timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile --vk-prefetch 16 > $OUT/prof-q8b-ahead.txt 2>&1
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-prefetch 8; tps $Z $D --vk-prefetch 16; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --vk-prefetch 8; tps $Z $M --vk-prefetch 16
  tps $Z $M --vk-glu-rows true --vk-glu-rows-nr 2; tps $Z $M --vk-glu-rows true --vk-glu-rows-nr 1
done
for i in 1 2; do tps $Z $M --vk-moe-wg 64; tps $Z $M --vk-moe-wg 256; tps $Z $M --vk-attn-wg 256; done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M --vk-attn-wg 256; tps $Z $M --vk-chunks 4x64; done
$Z sync-cost --backend vulkan --groups 1 2>&1 | tail -12
