#!/bin/bash
# For session 45 (not run: session 44's device time ran out; carry .gl, .dev; ~3.5 min): each
# key read once for 2 query heads at 2 keys an invocation (`--vk-attn-rows 2`, whose keys an
# invocation now default to 2), the candidate default on GPUs: the GPU selftest with it on,
# then against the one-pass form alternating: Qwen3-8B tg64 after 4,096 and 1,024 tokens,
# tg128 from an empty context, Qwen3-30B-A3B tg64 after 4,096 tokens; then the gate/up anomaly
# (the gate/up two stages after the rows form ~3 µs slower by the clock): the clock for the
# rows form at 1 head a workgroup (the default's shape), at 2, and at 2 in workgroups of 128
# (half the invocations, 2 KB less shared memory: does the gate/up follow its shape?); the
# default's clock is session 44's (docs/clock-h100-s44-8b-d4096.md).
# (~5 min; its log is `0log.txt`: tee it there, at most 8 files come back.)
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth; wait_8b
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 2 > $OUT/selftest.md 2>&1
echo "selftest rows 2 rc=$? $(tail -1 $OUT/selftest.md)"; grep -i fail $OUT/selftest.md | head -5
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do echo "8B d4096: rows $(tsj $D --vk-attn-rows 2)  one-pass $(tsj $D)"; done
D1="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024"
echo "8B d1024: rows $(tsj $D1 --vk-attn-rows 2)  one-pass $(tsj $D1)"
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 1"
echo "8B tg128: rows $(tsj $T --vk-attn-rows 2)  one-pass $(tsj $T)"
echo "[${SECONDS}s] 8B done"
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096"
echo "MoE d4096: rows $(tsj $M --vk-attn-rows 2)  one-pass $(tsj $M)"
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
echo "8B d4096 rows 1: $(tsj $D --vk-attn-rows 1)"
clocked rows1 $C --vk-attn-rows 1
clocked rows2 $C --vk-attn-rows 2
clocked rows2wg128 $C --vk-attn-rows 2 --vk-attn-wg 128
echo "[${SECONDS}s] done"
