#!/bin/bash
# ZINC against an earlier build (ZINC_OLD), alternating, after `zinc selftest` on the GPU, with
# decode attention loading 8 keys ahead (`--vk-attn-ahead 8`) beside. Needs $OUT, ZINC,
# ZINC_OLD and .gl/ (common.sh). About 5 minutes.
. scripts/device/common.sh
O=$ZINC_OLD
synth
timeout 100 $Z selftest --backend vulkan > $OUT/selftest.md 2>&1
echo "selftest rc=$? $(tail -1 $OUT/selftest.md)"; grep -i fail $OUT/selftest.md | head -5
wait
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $O $M; done; tps $Z $M --vk-attn-ahead 8
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $O $M; done; tps $Z $M --vk-attn-ahead 8
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $M; tps $O $M
