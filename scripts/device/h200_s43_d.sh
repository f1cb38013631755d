#!/bin/bash
# (Run with the option as a switch, `--vk-attn-rows true`: all heads a workgroup, as 8 is now.)
# Session 43, fourth call (carry .gl, .dev; ~3 min): the rows form in vector arithmetic (short
# loop nests): the driver's counts, Qwen3-8B tg64 after 4,096 tokens alternating with the
# default at 4 and 2 keys an invocation, the clock's marks.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
for a in 4 2; do
  timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-rows 8 --vk-attn-ahead $a --vk-pipeline-stats 2>&1 | grep -E "attn_dec" | head -3
done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-rows 8; tps $Z $D --vk-attn-rows 8 --vk-attn-ahead 2; done
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked rows-d4096 $C --vk-attn-rows 8
clocked rows2-d4096 $C --vk-attn-rows 8 --vk-attn-ahead 2
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 32
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 32 --vk-attn-ahead 2
echo "[${SECONDS}s] done"
