#!/bin/bash
# Session 26, fifth call: after the review's mends (thread 0's fence after the epoch it saw),
# the selftest at the defaults and with early weights, and Qwen3-8B tg128 both ways once.
. scripts/device/common.sh
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
gpu_selftest
timeout 100 $Z selftest --backend vulkan --vk-early-weights true > $OUT/selftest-early.md 2>&1
echo "selftest (early) rc=$? $(tail -1 $OUT/selftest-early.md)"; grep -i fail $OUT/selftest-early.md | head -5
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
ab "" "--vk-early-weights true" $T
