#!/bin/bash
# One GPU call: what the compute-to-compute barriers between a decode step's dispatches cost on
# the H200, by the ablation's barrier modes (`--vk-skip barrier`: none, timing only, results wrong;
# `barrier-exec`: execution dependencies without memory barriers; `barrier-read`: writes made
# visible to reads only), with `zinc selftest` under each reduced mode to see whether its
# results stay right on this driver. Qwen3-8B (empty context, after 4,096 tokens) and
# Qwen3-30B-A3B, tg128 alternating. About 5 minutes. Needs $OUT, ZINC and the loader debs in .gl/
# (see common.sh).
. scripts/device/common.sh
synth
for m in barrier-exec barrier-read; do
  timeout 100 $Z selftest --backend vulkan --vk-skip $m > $OUT/selftest-$m.md 2>&1
  echo "selftest [$m] rc=$? $(tail -1 $OUT/selftest-$m.md)"; grep FAIL $OUT/selftest-$m.md | head -3
done
wait
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
B="--vk-skip barrier"
for i in 1 2; do tps $Z $M; tps $Z $M $B-exec; tps $Z $M $B-read; tps $Z $M $B; done
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $M; tps $Z $M $B-exec; tps $Z $M $B-read
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
tps $Z $M; tps $Z $M $B-exec; tps $Z $M $B-read
