#!/bin/bash
# Session 34 (carry .gl, .dev and .lbin): the MoE prompt's router taking 8 tokens a workgroup
# column (`--vk-matvec-tokens`, new; 1 is the old form) alternating with one token, three times
# each on Qwen3-30B-A3B pp512; its kernel profile; the selftest; common.sh's three side-by-sides
# against the carried llama.cpp CUDA build (commit 0c1e570, sm_90).
. scripts/device/common.sh
T0=$(date +%s)
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
build_llama; synth; wait_synth; el
gpu_selftest; cp $OUT/selftest.md $R/; el
P="-m /tmp/moe.gguf -p 512 -n 0 -r 2"
for i in 1 2 3; do tps $Z $P; tps $Z $P --vk-matvec-tokens 1; done; el
timeout 120 $Z bench --backend vulkan -m /tmp/moe.gguf -p 512 -n 0 -r 1 --profile > $R/profile-moe-pp512.md 2>&1
echo "profile rc=$?"; grep -E "^\| (matvec|moe_route|qk_prep|attn_cm)" $R/profile-moe-pp512.md; el
vs_llama; el
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
