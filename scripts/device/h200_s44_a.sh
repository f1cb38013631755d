#!/bin/bash
# Session 44, first call (carry .gl, .dev; ~3 min): session 43's h200_s43_e.sh (the rows form as
# shipped: the GPU selftest with it on, the driver's counts, Qwen3-8B tg64 after 4,096 tokens at
# 2 and 4 heads a workgroup and 2 and 4 keys an invocation against the default), then the clock
# for the default and for 2 heads at 2 keys (the gate/up seen ~8 µs slower beside rows kernels);
# then the fused pre-norm (`--vk-fuse-norm true`, off since session 17) against the default on
# the three decode tests, and clocked from an empty context.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
synth; wait_8b
echo "[${SECONDS}s] file ready"
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 8 > $OUT/selftest-rows.md 2>&1
echo "selftest rows 8 rc=$? $(tail -1 $OUT/selftest-rows.md)"; grep -i fail $OUT/selftest-rows.md | head -5
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 2 --vk-attn-ahead 2 > $OUT/selftest-rows2.md 2>&1
echo "selftest rows 2 ahead 2 rc=$? $(tail -1 $OUT/selftest-rows2.md)"; grep -i fail $OUT/selftest-rows2.md | head -5
for h in 4 2; do for a in 2 4; do
  echo "rows $h ahead $a: $(timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-rows $h --vk-attn-ahead $a --vk-pipeline-stats 2>&1 | grep -E "attn_dec_prep_rows|attn_dec_rows" | head -2 | tr '\n' ' ')"
done; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D
for h in 4 2; do for a in 2 4; do tps $Z $D --vk-attn-rows $h --vk-attn-ahead $a; done; done
tps $Z $D
tps $Z $D --vk-attn-rows 2 --vk-attn-ahead 2
tps $Z $D --vk-attn-rows 1 --vk-attn-ahead 2
tps $Z $D --vk-attn-merge true
tps $Z $D
tps $Z $D --vk-attn-merge true
echo "[${SECONDS}s] A/B done"
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked def-d4096 $C
clocked rows2h-d4096 $C --vk-attn-rows 2 --vk-attn-ahead 2
echo "[${SECONDS}s] rows done"
wait_synth
decode_alt "--vk-fuse-norm true"
clocked def-d0 -m /tmp/q8b.gguf -p 0 -n 8 -r 1
clocked fuse-d0 -m /tmp/q8b.gguf -p 0 -n 8 -r 1 --vk-fuse-norm true
echo "[${SECONDS}s] done"
