#!/bin/bash
# Session 34, second call (carry .gl and .dev): the prompt router's loop with two vectors' loads
# in flight (.dev/b/zinc) against one (.dev/zinc, commit 33e2656), Qwen3-30B-A3B pp512
# alternating three times, and each one's profile line for the router.
. scripts/device/common.sh
[ -e .dev/b/zinc ] || { xz -dc .dev/b/zinc.xz > .dev/b/zinc && chmod +x .dev/b/zinc; }
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1
P="-m /tmp/moe.gguf -p 512 -n 0 -r 2"
for i in 1 2 3; do tps $Z $P; tps .dev/b/zinc $P; done
for b in $Z .dev/b/zinc; do
  timeout 120 $b bench --backend vulkan $P --profile 2>&1 | grep -E "^\| matvec_tokens"
done
