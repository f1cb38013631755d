#!/bin/bash
# The least of h200_s36_b.sh, for a call of ~2 minutes (carry .gl and .dev): the selftest with
# the five new prompt options on, then the four dense ones each against itself off on Qwen3-8B
# pp512.
. scripts/device/common.sh
R=$OUT
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
selftest_new 50
wait_8b
for o in --vk-split-k --vk-mm-beside --vk-prep-rows --vk-act-quant-sg; do
  pick $o /tmp/q8b.gguf
done
