#!/bin/bash
# Session 13's first call: what one dependent stage costs on its own (empty stages padded in
# before every barrier, `--vk-pad-stages`: the slope), the host polling its fences against
# sleeping on them (`--vk-spin-wait`), the router's routing as its own dispatch, and both
# decode profiles. About 6 minutes of device time. Needs $OUT, ZINC and .gl/ (common.sh).
. scripts/device/common.sh
synth
wait
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-spin-wait false; done
for p in 1 2; do tps $Z $M --vk-pad-stages $p; done
for i in 1 2; do tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096; tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 --vk-spin-wait false; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-spin-wait false; done
tps $Z $M --vk-pad-stages 1
tps $Z $M --vk-router-routes false
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.md 2>&1
$Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.md 2>&1
grep -E "^\|" $OUT/prof-moe.md | head -30
