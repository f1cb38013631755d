#!/bin/bash
# Session 18, second GPU call: where the router's time goes (timing only, wrong picks):
# Qwen3-30B-A3B tg128 with the router whole (0), without its ranking writing experts 0..7 (1),
# without its ranking writing picks scattered over the experts (3), and ranked but writing 0..7
# (4), alternating.
. scripts/device/common.sh
synth
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --vk-router-stop 1; tps $Z $M --vk-router-stop 3; tps $Z $M --vk-router-stop 4
done
