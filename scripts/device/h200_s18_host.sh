#!/bin/bash
# Session 18, fourth GPU call: the picks' weights normalized by their invocations at once (one
# invocation did all, in turn) against the third call's build ($ZINC_OLD), alternating,
# Qwen3-30B-A3B tg128; the host's gap between tokens split (before the next step's first
# command, and recording its first piece) at the recording's first piece of 16 (default), 4
# and 8 commands; Qwen3-8B tg128 once for its gap.
export ZINC_OLD=.dev/zinc_old
. scripts/device/common.sh
synth
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $ZINC_OLD $M; done
for i in 1 2; do tps $Z $M --vk-chunks 4x64; tps $Z $M --vk-chunks 8x64; done
tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2
