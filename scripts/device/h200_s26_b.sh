#!/bin/bash
# Session 26, second call: which early-weights consumers cost more than the barrier they save.
# Qwen3-8B tg128 at the default (off), then early weights with every consumer waiting
# (`--vk-early-mask 15`), each alone (1 q/k/v, 2 out-projection, 4 gate/up, 8 head), and all
# without touching their weights first (`--vk-early-touch 0`); twice each, in turn.
. scripts/device/common.sh
synth
wait_synth
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
E="--vk-early-weights true"
for i in 1 2; do
  tps $Z $T
  for m in 15 1 2 4 8 10; do tps $Z $T $E --vk-early-mask $m; done
  tps $Z $T $E --vk-early-touch 0
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M $E --vk-early-mask 2; tps $Z $M $E --vk-early-mask 10; done
