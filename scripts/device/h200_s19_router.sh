#!/bin/bash
# Session 19, seventh GPU call (the budget's last minutes): the MoE router's threads a row
# (`--vk-threads-per-row`, the float mat-vec's: 64 by default; at 32 and 16 its workgroup of 128
# takes 4 and 8 rows), alternating, Qwen3-30B-A3B tg128.
. scripts/device/common.sh
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-threads-per-row 32; tps $Z $M --vk-threads-per-row 16; done
