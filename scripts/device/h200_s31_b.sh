#!/bin/bash
# Session 31, second call: the kernels' clock with marks inside the attention, the mat-vecs and
# the norm (CLK_MARK: where a workgroup's time goes between its start and its end), on
# Qwen3-8B and Qwen3-30B-A3B.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth
clocked() {
  local name=$1; shift
  timeout 150 $Z bench --backend vulkan "$@" --vk-clock --clock-out $OUT/clock-$name.json \
    > $OUT/clock-$name.md 2>&1
  echo "== clocked $name ($*): rc=$?"; grep -E "^\|" $OUT/clock-$name.md | head -14
}
clocked 8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
