#!/bin/bash
# Session 18, third GPU call: route.glsl's small ranking (keys four to a vector, both of an
# invocation's experts against each, picks written by their invocations) against the build of
# the second call ($ZINC_OLD: the ranking a key at a time), alternating: Qwen3-30B-A3B tg128,
# then the new build's router without its ranking (timing only) for the ranking's cost now;
# the selftest first.
export ZINC_OLD=.dev/zinc_old
. scripts/device/common.sh
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $ZINC_OLD $M; done
tps $Z $M --vk-router-stop 3
timeout 90 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.txt 2>&1
grep -E "router|moe_|norm_quant" $OUT/prof-moe.txt
