#!/bin/bash
# Session 34, second call (carry .gl and .dev): the prompt router's loop with two vectors' loads
# in flight (.dev/b/zinc) against one (.dev/zinc, commit 33e2656), Qwen3-30B-A3B pp512
# alternating twice, and each one's profile line for the router.
. scripts/device/common.sh
[ -e .dev/b/zinc ] || { xz -dc .dev/b/zinc.xz > .dev/b/zinc && chmod +x .dev/b/zinc; }
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
P="-m /tmp/moe.gguf -p 512 -n 0 -r 2"
for i in 1 2; do tps $Z $P; tps .dev/b/zinc $P; done
for b in $Z .dev/b/zinc; do
  timeout 120 $b bench --backend vulkan $P --profile 2>&1 | grep -E "^\| matvec_tokens"
done
# The same bits on this driver: every position's logits of a 20-token prompt with the router at
# 8 tokens a column and at 1, both at 16 lanes a row (.dev/b/zinc).
T=$(seq -s, 11 30)
for n in 1 8; do
  timeout 60 .dev/b/zinc logits --backend vulkan -m /tmp/moe.gguf --tokens $T --vk-threads-per-row 16 \
    --vk-matvec-tokens $n -o /tmp/l$n.json > /dev/null 2>&1; echo "logits $n rc=$?"
done
md5sum /tmp/l1.json /tmp/l8.json; cmp /tmp/l1.json /tmp/l8.json && echo "same bits"
