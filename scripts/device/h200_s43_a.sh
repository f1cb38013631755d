#!/bin/bash
# (Run with the option as a switch, `--vk-attn-rows true`: all heads a workgroup, as 8 is now.)
# Session 43, first call (carry .gl, .dev; ~8 min): decode attention with each key read once
# for all of a KV head's query heads (`--vk-attn-rows`, attn_dec.comp's KROWS) after 4,096
# tokens — the GPU selftest with it on, then Qwen3-8B tg64 there alternating with the default
# (one query head a workgroup, one pass), its shapes (slices, workgroup, keys ahead), the clock.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 8 > $OUT/selftest-rows.md 2>&1
echo "selftest rows rc=$? $(tail -1 $OUT/selftest-rows.md)"; grep -i fail $OUT/selftest-rows.md | head -5
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-rows 8; done
echo "[${SECONDS}s] shapes"
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 32
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 8
tps $Z $D --vk-attn-rows 8 --vk-attn-wg 128
tps $Z $D --vk-attn-rows 8 --vk-attn-ahead 2
tps $Z $D --vk-attn-rows 8 --vk-attn-ahead 8
tps $Z $D --vk-attn-rows 8 --vk-attn-slices 32 --vk-attn-ahead 2
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024
tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024 --vk-attn-rows 8
echo "[${SECONDS}s] clock"
clocked rows-d4096 -m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096 --vk-attn-rows 8
timeout 60 $Z bench --backend vulkan $D --vk-attn-rows 8 --vk-pipeline-stats 2>&1 | grep -i "attn" | head -8
echo "[${SECONDS}s] done"
