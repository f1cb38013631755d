#!/bin/bash
# Session 31, third call: the one-slice decode attention's prep loads all issued at once (the
# norms' weights in the push constants, the raw key and value without waiting for `pos`, the
# early-weights flag read with the prep's words instead of a load at the end) against the
# build before it (.dev/zinc-old, whose plain kernels are session 30's), alternating; the
# selftest; the kernels' clock again (marks) for what moved.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
gpu_selftest
wait_synth
export ZINC_OLD=.dev/zinc-old
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do tps $Z $M; tps $ZINC_OLD $M; done
done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D; tps $ZINC_OLD $D
clocked 8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
