#!/bin/bash
# (Run with the option as a switch, `--vk-attn-rows true`: all heads a workgroup, as 8 is now.)
# Session 43, third call (carry .gl, .dev; ~3 min): where the rows form's time goes — the
# clock's marks (scores made, softmax) at 4 and 2 keys an invocation — and the driver's counts
# for the default one-pass kernel beside the rows kernels'.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-pipeline-stats 2>&1 | grep -E "attn_dec|matvec_dec" | head -6
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked def-d4096 $C
clocked rows-d4096 $C --vk-attn-rows 8
clocked rows2-d4096 $C --vk-attn-rows 8 --vk-attn-ahead 2
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader
echo "[${SECONDS}s] done"
