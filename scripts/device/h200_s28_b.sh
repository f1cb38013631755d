#!/bin/bash
# (Historical: `--vk-attn-vsh` and VSH were removed after these calls; see BENCHMARKS, session 28.)
# Session 28, second call: the decode attention over one slice with its output in chunks of 32
# (`--vk-attn-x32`, a query head a workgroup) and the values staged by the score pass
# (`--vk-attn-vsh`), both on by default now: the selftest, each against off on Qwen3-8B tg128
# and the MoE, alternating; a profile; then the three side-by-sides with llama.cpp's CUDA
# build (built beside from the start).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $T
  tps $Z $T --vk-attn-x32 false --vk-attn-vsh false
  tps $Z $T --vk-attn-x32 false
  tps $Z $T --vk-attn-vsh false
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --vk-attn-x32 false --vk-attn-vsh false; done
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile 2>&1 | grep -E "attn|matvec|norm" | head -12
llama_wait
vs_llama
