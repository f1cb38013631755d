#!/bin/bash
# Session 29, seventh call: is the 16-slice regression of calls 4–6 the build's? `.dev/zinc`
# merges up to 8 slices in place (attn_dec.comp's MERGE_MAX 8, as before this session),
# `.dev/zinc16` up to 16 (MERGE_MAX 16: a larger shared array in every variant); both take
# about 12 slices by default. After 4,096 tokens, alternating, and what the driver compiled
# attn_dec_prep to in each.
. scripts/device/common.sh
nvidia-smi --query-gpu=name --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $D; tps $Z $D --vk-attn-slices 16; tps .dev/zinc16 $D --vk-attn-slices 16; done
for b in $Z .dev/zinc16; do
  timeout 30 $b bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 4096 --vk-attn-slices 16 \
    --vk-pipeline-stats 2>&1 | grep attn_dec_prep
done
