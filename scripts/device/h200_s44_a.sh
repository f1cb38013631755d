#!/bin/bash
# Session 44, first call (carry .gl, .dev with zinc.xz and zinc_old.xz, .lbin; ~9 min):
# 1. Stealing workgroups (`--vk-steal PCT`, matvec_dec.comp's STEAL; off by default): the greedy
#    text with and without, Qwen3-8B tg128 at 50/75% against the default and against the build
#    before (zinc_old: no STEAL in the shader), the clock with and without (its new "90% ended"
#    column: how long a stage's last tenth straggles).
# 2. Session 43's rows form as shipped (`--vk-attn-rows 2 --vk-attn-ahead 2`): the GPU selftest
#    with it on, the driver's counts, tg64 after 4,096 tokens against the default and the
#    in-place merge, the clock.
# 3. The side-by-side with llama.cpp CUDA at the defaults (`vs_llama`).
# 4. The fused pre-norm (`--vk-fuse-norm true`, off since session 17), as time allows.
. scripts/device/common.sh
[ -e .dev/zinc_old.xz ] && [ ! -e .dev/zinc_old ] && xz -dc .dev/zinc_old.xz > .dev/zinc_old && chmod +x .dev/zinc_old
O=.dev/zinc_old
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
synth; llama_beside; wait_8b
echo "[${SECONDS}s] 8B ready"
for s in "" "--vk-steal 50"; do
  echo "greedy [$s]: $(timeout 60 $Z run --backend vulkan -m /tmp/q8b.gguf -p 'The quick brown fox' -n 48 --temp 0 $s 2>/dev/null | md5sum)"
done
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $T; tps $O $T; tps $Z $T --vk-steal 75; tps $Z $T --vk-steal 50
done
C0="-m /tmp/q8b.gguf -p 0 -n 8 -r 1"
clocked def-d0 $C0
clocked steal75-d0 $C0 --vk-steal 75
echo "[${SECONDS}s] steal done"
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 2 --vk-attn-ahead 2 > $OUT/selftest-rows2.md 2>&1
echo "selftest rows 2 ahead 2 rc=$? $(tail -1 $OUT/selftest-rows2.md)"; grep -i fail $OUT/selftest-rows2.md | head -5
echo "rows 2 ahead 2: $(timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-rows 2 --vk-attn-ahead 2 --vk-pipeline-stats 2>&1 | grep -E "attn_dec_prep_rows" | head -1)"
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  tps $Z $D
  tps $Z $D --vk-attn-rows 2 --vk-attn-ahead 2
  tps $Z $D --vk-attn-merge true
done
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked def-d4096 $C
clocked rows2h-d4096 $C --vk-attn-rows 2 --vk-attn-ahead 2
echo "[${SECONDS}s] rows done"
wait_synth; llama_wait
vs_llama
echo "[${SECONDS}s] side-by-side done"
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
tps $Z $T --vk-fuse-norm true; tps $Z $T
tps $Z $M; tps $Z $M --vk-fuse-norm true
echo "[${SECONDS}s] done"
