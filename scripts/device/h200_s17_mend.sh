#!/bin/bash
# Session 17, fourth GPU call (what device time was left): the review's mends (aef8134: the
# router beside its norm storing its logits through coherent references, as the router that
# routes always did) — the selftest, then Qwen3-30B-A3B tg128 with the router beside its norm
# on and off, alternating, in this one build.
. scripts/device/common.sh
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-router-norm false; done
