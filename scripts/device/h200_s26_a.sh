#!/bin/bash
# Session 26, first call: llama.cpp's CUDA build (0c1e570, in the background, niced) while the
# selftest runs at the defaults and with early weights (`--vk-early-weights true`: consumer
# mat-vecs beside their producers, waiting in the shader), then that option against the default
# on one build, alternating: Qwen3-8B tg128, tg64 after 4,096 tokens, Qwen3-30B-A3B tg128; a
# profile of each; then the three side-by-sides with the option on.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
llama_beside
synth
wait_synth
E="--vk-early-weights true"
gpu_selftest
timeout 100 $Z selftest --backend vulkan $E > $OUT/selftest-early.md 2>&1
echo "selftest (early) rc=$? $(tail -1 $OUT/selftest-early.md)"; grep -i fail $OUT/selftest-early.md | head -5
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
ab "" "$E" $T
tps $Z $T --vk-early-weights true --vk-fuse-norm true
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
ab "" "$E" $D
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
ab "" "$E" $M
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/profile-off.txt 2>&1
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile $E > $OUT/profile-on.txt 2>&1
llama_wait
VS_ZINC="--zinc-arg=--vk-early-weights --zinc-arg=true" vs_llama
