#!/bin/bash
# Session 17, second GPU call: the MoE router normalizing its own input beside the FFN's
# pre-norm (matvec.comp's SN, `--vk-router-norm`, on by default) — one dependent stage fewer a
# MoE layer — on against off in one build, alternating, on Qwen3-30B-A3B tg128 (and Qwen3-8B,
# which has no router, as a control); a profile with it on; then llama.cpp (built beside the
# A/B) against this build on the five side-by-side tests.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
(build_llama 12 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M --vk-router-norm true; tps $Z $M --vk-router-norm false; done
tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2
echo "== profile, router beside its norm"
timeout 60 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile 2>&1 | grep -E '^\| (moe|router|norm|attn|matvec|qk)'
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
vs_llama
