#!/bin/bash
# Session 15's last call: how long loading takes, the weights' host copies split across the
# host's threads (.dev/zinc) against one thread (.dev/zinc-prev), alternating on the 30B-A3B
# and Qwen3-8B files (each load's own "loaded … in" line). Needs .dev/zinc, .dev/zinc-prev, .gl.
. scripts/device/common.sh
synth; wait
for i in 1 2; do
  for b in .dev/zinc-prev .dev/zinc; do
    for f in moe q8b; do
      echo "$b $f $(timeout 100 $b bench --backend vulkan -m /tmp/$f.gguf -p 1 -n 0 -r 1 2>&1 | grep -o 'in [0-9.]* s$')"
    done
  done
done
