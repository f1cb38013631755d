#!/bin/bash
# One GPU call, a session's first: `zinc selftest`, then decode timings with each run's host-
# waiting share, device span, idle µs between tokens and dependent stages a token (zinc bench
# prints them): Qwen3-8B tg128 at the defaults and with wider decode norms (`--vk-norm-wg`),
# after 4,096 tokens, Qwen3-30B-A3B at the defaults and with the router's routing as its own
# dispatch (`--vk-router-routes false`); where ZINC_OLD names an earlier build, it alternates
# with ZINC. Then what each kernel costs on the MoE (`zinc bench --ablate`) and the per-kernel
# GPU timestamps of both (`--profile`). Session 12 ran an earlier form (ZINC_OLD at ff3caa6 and
# the barrier-free runs; docs/BENCHMARKS.md). About 6 minutes of device time. Needs $OUT, ZINC
# and the Vulkan loader debs in .gl/ (see common.sh).
. scripts/device/common.sh
O=${ZINC_OLD:-}
synth
timeout 100 $Z selftest --backend vulkan > $OUT/selftest.md 2>&1
echo "selftest rc=$? $(tail -1 $OUT/selftest.md)"; grep FAIL $OUT/selftest.md | head -5
wait
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; [ -n "$O" ] && tps $O $M; done
for w in 128 256; do tps $Z $M --vk-norm-wg $w; done
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; [ -n "$O" ] && tps $O $M; done
tps $Z $M --vk-router-routes false
timeout 200 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --ablate > $OUT/ablate-moe.md 2>&1
grep -vE 'run [0-9]' $OUT/ablate-moe.md | tail -25
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.md 2>&1
$Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.md 2>&1
head -c 2500 $OUT/prof-moe.md
