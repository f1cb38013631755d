#!/bin/bash
# Session 29, fifth call: after 4,096 tokens, the slices merged in place (`--vk-attn-merge
# true`, chunks of 32 for the out-projection, no attn_combine stage) at 12, 10 and 8 slices
# against the default (16 slices and attn_combine) and attn_combine at 12 and 8, alternating;
# then the side-by-sides with llama.cpp's CUDA build (built beside from the start): the three
# at the defaults, and after 4,096 tokens again with the merge at 12 slices.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth; wait_synth
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
M="--vk-attn-merge true --vk-attn-slices"
for i in 1 2; do
  tps $Z $D
  tps $Z $D $M 12
  tps $Z $D --vk-attn-slices 12
  tps $Z $D $M 10
  tps $Z $D $M 8
  tps $Z $D --vk-attn-slices 8
done
tps $Z $D $M 6
tps $Z -m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096
tps $Z -m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096 $M 12
llama_wait
vs_llama
echo "== Qwen3-8B: generation 128 after 4096 tokens, the merge at 12 slices"
timeout 120 python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 \
  --zinc-arg=--vk-attn-merge --zinc-arg=true --zinc-arg=--vk-attn-slices --zinc-arg=12 \
  -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 3350 --out $OUT/cuda-d4096-merge12
