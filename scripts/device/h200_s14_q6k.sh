#!/bin/bash
# Session 14's fifth call (the device time left after the side-by-side, ~5 minutes): Q6_K lanes
# taking the two quarter pairs that share high bits (`--vk-decode-pieces 2`, pairs on at 2
# pieces) by `zinc matvec-cost` and Qwen3-8B tg128, and the MoE forms without pairs against the
# side-by-side's build (ZINC_OLD, .dev/zinc-prev) on Qwen3-30B-A3B tg128.
. scripts/device/common.sh
synth
while [ ! -s /tmp/q8b.gguf ] || pgrep -f "preset qwen3-8b" >/dev/null; do sleep 2; done
for o in "" "--vk-decode-pieces 2"; do
  echo "== matvec-cost $o"
  timeout 60 $Z matvec-cost --backend vulkan -m /tmp/q8b.gguf $o 2>&1 | grep -E "^\| (blk|output)" \
    | awk -F'|' '{printf "%s%s %s/%s; ", $3, $4, $8, $10} END {print ""}'
done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $ZINC_OLD $M; tps $Z $M; tps $Z $M --vk-decode-pieces 2; done
wait
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $ZINC_OLD $M; tps $Z $M; done
