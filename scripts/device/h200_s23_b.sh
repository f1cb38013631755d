#!/bin/bash
# A record of what ran: `--vk-attn-early` (and `--vk-attn-ahead 16`) existed only in that
# call's build, removed after it measured slower (BENCHMARKS, session 23); not runnable now.
# Session 23, second call: after 4,096 tokens, the decode attention's query heads a workgroup
# (`--vk-attn-heads` 1, 2, 4: with four, a slice's keys are read once for the KV head's four
# query heads, not four times from L2) against the keys each invocation loads at once
# (`--vk-attn-ahead` 4, 8, 16) and slices (16, 32); the values loaded with the keys
# (`--vk-attn-early`, now straight-line code) at four heads; what the driver compiled each to.
. scripts/device/common.sh
synth
wait_synth
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  tps $Z $D
  for h in 2 4; do for u in 8 16; do tps $Z $D --vk-attn-heads $h --vk-attn-ahead $u; done; done
  tps $Z $D --vk-attn-heads 4 --vk-attn-early true
done
tps $Z $D --vk-attn-ahead 8
tps $Z $D --vk-attn-heads 4 --vk-attn-ahead 8 --vk-attn-slices 32
tps $Z $D --vk-attn-heads 4 --vk-attn-early true --vk-attn-slices 32
tps $Z $D --vk-attn-early true
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-early true; done
echo "== what the driver compiled the attention to"
for o in "" "--vk-attn-heads 4 --vk-attn-ahead 8" "--vk-attn-heads 4 --vk-attn-early true"; do
  timeout 90 $Z bench --backend vulkan $D $o --vk-pipeline-stats 2>&1 | grep -E 'attn_(dec|prep)' | head -3
done
timeout 100 $Z selftest --backend vulkan --vk-attn-early true --vk-attn-heads 4 > $OUT/selftest.md 2>&1
echo "selftest early, 4 heads rc=$? $(tail -1 $OUT/selftest.md)"; grep -i fail $OUT/selftest.md | head -5
