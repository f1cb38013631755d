#!/bin/bash
# Session 19, first GPU call (HEAD 80d2ced, one build, options alternating): session 18's
# prepared measurements (h200_s18_next.sh: the selftest, the router that routes in workgroups
# of 128 against 64 on Qwen3-30B-A3B tg128, the ranking's remaining cost at each with
# `--vk-router-stop 3`, `zinc sync-cost`'s recording costs), then a profile of each file.
. scripts/device/h200_s18_next.sh
timeout 90 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.txt 2>&1
timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.txt 2>&1
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; done
