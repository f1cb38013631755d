#!/bin/bash
# Session 42 (carry .gl, .dev, .lbin; ~8 min): decode steps recorded ahead (`--vk-step-ahead`,
# on by default: each step recorded while the device runs the one before and submitted whole,
# its token written at launch). First the greedy text with it on and off (the same bits), then
# on against off alternating (Qwen3-30B-A3B tg128 three pairs, Qwen3-8B tg128 two, after 4,096
# tokens one), the side-by-side with llama.cpp CUDA at the defaults, and five MoE tg128 pairs
# with llama-bench.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama > /dev/null
wait_synth > /dev/null
echo "[${SECONDS}s] files ready"
for a in true false; do
  echo "greedy, ahead $a: $(timeout 60 $Z run --backend vulkan -m /tmp/q8b.gguf -p 'The quick brown fox' -n 48 --temp 0 --vk-step-ahead $a 2>/dev/null | md5sum)"
done
for i in 1 2 3; do for a in true false; do tps $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 --vk-step-ahead $a; done; done
for i in 1 2; do for a in true false; do tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2 --vk-step-ahead $a; done; done
for a in true false; do tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 --vk-step-ahead $a; done
echo "[${SECONDS}s] A/B done"
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; cp $OUT/$d/*.svg $R/ 2>/dev/null; done
echo "[${SECONDS}s] side-by-side done"
pairs 5 "Qwen3-30B-A3B tg128" -m /tmp/moe.gguf -p 0 -n 128 -r 2
echo "[${SECONDS}s] done"
