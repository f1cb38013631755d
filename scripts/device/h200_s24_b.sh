#!/bin/bash
# Session 24, second call: the NIN prologue as a loop that is not unrolled (the first call's
# unrolled prologue compiled to 94 registers, two 256-invocation workgroups an SM: the gate/up
# took 49.7 µs a call against 28.3). The driver's register counts of the gate/up with and
# without NIN, then Qwen3-8B tg128 alternating, and a profile with it.
. scripts/device/common.sh
[ -e /tmp/q8b.gguf ] || { synth; wait_synth; }
N="--vk-norm-in-glu true"
for o in "" "$N"; do
  timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats $o 2>&1 \
    | grep "matvec_dec_Q4_K \[256"
done
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $T; tps $Z $T $N; done
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile $N 2>&1 | grep "matvec_dec_Q4_K 12288\|norm_quant"
