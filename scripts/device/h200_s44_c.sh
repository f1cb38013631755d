#!/bin/bash
# Session 44, third call (carry .gl, .dev; ~3.5 min): each key read once for 2 query heads at 2
# keys an invocation, now the default on GPUs (`attn_rows` 2, `attn_rows_keys` 2): the GPU
# selftest at the defaults, then against the one-pass form (`--vk-attn-rows 0`) alternating:
# Qwen3-8B tg64 after 4,096 and 1,024 tokens, tg128 from an empty context, Qwen3-30B-A3B tg64
# after 4,096 tokens.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth; wait_8b
gpu_selftest
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do echo "8B d4096: rows $(tsj $D)  one-pass $(tsj $D --vk-attn-rows 0)"; done
D1="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024"
echo "8B d1024: rows $(tsj $D1)  one-pass $(tsj $D1 --vk-attn-rows 0)"
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 1"
echo "8B tg128: rows $(tsj $T)  one-pass $(tsj $T --vk-attn-rows 0)"
echo "[${SECONDS}s] 8B done"
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096"
echo "MoE d4096: rows $(tsj $M)  one-pass $(tsj $M --vk-attn-rows 0)"
echo "[${SECONDS}s] done"
