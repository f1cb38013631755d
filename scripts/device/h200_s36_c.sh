#!/bin/bash
# The least of h200_s36_b.sh, for a call of ~2 minutes (carry .gl and .dev): the selftest with
# the five new prompt options on, then split-K and the mat-muls beside each other, each against
# itself off on Qwen3-8B pp512.
. scripts/device/common.sh
R=$OUT
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
NEW="--vk-split-k true --vk-mm-beside true --vk-prep-rows true --vk-act-quant-sg true --vk-moe-skip true"
timeout 50 $Z selftest --backend vulkan $NEW > $R/selftest-new.md 2>&1
echo "selftest, the five new options on: rc=$? $(tail -1 $R/selftest-new.md)"
grep -iE "fail" $R/selftest-new.md | head -5
while pgrep -f "preset qwen3-8b" > /dev/null; do sleep 1; done
for o in --vk-split-k --vk-mm-beside --vk-prep-rows --vk-act-quant-sg; do
  for v in true false; do
    echo "== $o $v: $(timeout 40 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 512 -n 0 -r 2 $o $v 2>&1 | grep -E '^\| qwen' | awk -F'|' '{print $(NF-1)}')"
  done
done
