#!/bin/bash
# Session 24, first call: llama.cpp's CUDA build (0c1e570, in the background, niced) while this
# session's build passes the selftest at its defaults and with a dense FFN's pre-norm inside
# the gate/up dispatch (`--vk-norm-in-glu true`, matvec_dec.comp's NIN), and that option runs
# against the default on one build, alternating: Qwen3-8B tg128 three times each, tg64 after
# 4,096 tokens twice each, a profile of each and the driver's register counts; then the three
# side-by-sides with the option on (the MoE has no dense FFN: it runs as at the defaults).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
llama_beside
synth
wait_synth
N="--vk-norm-in-glu true"
gpu_selftest
timeout 100 $Z selftest --backend vulkan $N > $OUT/selftest-nin.md 2>&1
echo "selftest (NIN) rc=$? $(tail -1 $OUT/selftest-nin.md)"; grep -i fail $OUT/selftest-nin.md | head -5
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $T; tps $Z $T $N; done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D $N; done
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/profile-off.txt 2>&1
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile $N > $OUT/profile-on.txt 2>&1
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats $N > $OUT/stats-on.txt 2>&1
grep -i "matvec_dec" $OUT/stats-on.txt | head -8
llama_wait
VS_ZINC="--zinc-arg=--vk-norm-in-glu --zinc-arg=true" vs_llama
