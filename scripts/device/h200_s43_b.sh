#!/bin/bash
# (Run with the option as a switch, `--vk-attn-rows true`: all heads a workgroup, as 8 is now.)
# Session 43, second call (carry .gl, .dev; ~5 min): the rows form with its loads' arrays of
# literal size (KROWS 4, and KROWS 2 at `--vk-attn-ahead 2`): the driver's counts, Qwen3-8B tg64
# after 4,096 tokens alternating with the default, its slices, the clock.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for a in 4 2; do
  timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-rows 8 --vk-attn-ahead $a --vk-pipeline-stats 2>&1 | grep -E "attn_dec" | head -3
done
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-rows 8; tps $Z $D --vk-attn-rows 8 --vk-attn-ahead 2; done
echo "[${SECONDS}s] shapes"
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 32
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 32 --vk-attn-ahead 2
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 8
tps $Z $D --vk-attn-rows 8 --vk-attn-wg 128
echo "[${SECONDS}s] clock"
clocked rows-d4096 -m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096 --vk-attn-rows 8
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 8 > $OUT/selftest-rows.md 2>&1
echo "selftest rows rc=$? $(tail -1 $OUT/selftest-rows.md)"; grep -i fail $OUT/selftest-rows.md | head -5
echo "[${SECONDS}s] done"
