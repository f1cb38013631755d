#!/bin/bash
# Ready for the next call (carry .gl and .dev): the prompt router's 8 tokens a column held to one
# token a column bit for bit on this driver — every position's logits of a 20-token prompt of
# Qwen3-30B-A3B, both at 16 lanes a row (lavapipe's test proves it there only) — then the
# selftest.
. scripts/device/common.sh
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
T=$(seq -s, 11 30)
for n in 1 8; do
  timeout 60 $Z logits --backend vulkan -m /tmp/moe.gguf --tokens $T --vk-threads-per-row 16 \
    --vk-matvec-tokens $n -o /tmp/l$n.json > /dev/null 2>&1; echo "logits $n rc=$?"
done
md5sum /tmp/l1.json /tmp/l8.json; cmp /tmp/l1.json /tmp/l8.json && echo "same bits"
gpu_selftest
