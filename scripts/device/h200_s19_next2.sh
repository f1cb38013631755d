#!/bin/bash
# The rest of what session 19 left to measure (after h200_s19_next.sh): the short-context
# attention in workgroups of 256 (`--vk-attn-wg 256`, one direct slice a workgroup; last
# measured before the direct slices existed) and a first piece of 4 commands (`--vk-chunks 4x64`,
# the host's gap) against the defaults on both files; the experts' gate/up workgroups of 64 and
# 256 (`--vk-moe-wg`, new, default 128) on Qwen3-30B-A3B; and `zinc sync-cost`'s round trip
# (new: the host's submit of one command buffer, and the wait for its fence).
. scripts/device/common.sh
synth
wait_synth
for f in moe q8b; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-wg 256; tps $Z $M --vk-chunks 4x64; done
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-moe-wg 64; tps $Z $M --vk-moe-wg 256; done
$Z sync-cost --backend vulkan --groups 1
