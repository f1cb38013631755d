#!/bin/bash
# Session 43, for the next (carry .gl, .dev; ~130 s; not run: the session's device time ran
# out): the rows form as shipped (the slots' shuffles outside the unrolled loops, head loops
# bounded by G, keys loaded in the loop) at 2 and 4 heads a workgroup (`--vk-attn-rows N`), 2
# and 4 keys an invocation — the GPU selftest with it on, the driver's counts, and Qwen3-8B
# tg64 after 4,096 tokens alternating with the default.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 8 > $OUT/selftest-rows.md 2>&1
echo "selftest rows rc=$? $(tail -1 $OUT/selftest-rows.md)"; grep -i fail $OUT/selftest-rows.md | head -5
for h in 4 2; do for a in 2; do
  echo "rows $h ahead $a: $(timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-rows $h --vk-attn-ahead $a --vk-pipeline-stats 2>&1 | grep -E "attn_dec_prep_rows" | head -1)"
done; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D
for h in 4 2; do for a in 2 4; do tps $Z $D --vk-attn-rows $h --vk-attn-ahead $a; done; done
tps $Z $D
tps $Z $D --vk-attn-rows 2 --vk-attn-ahead 2
echo "[${SECONDS}s] done"
