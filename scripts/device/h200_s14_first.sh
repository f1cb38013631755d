#!/bin/bash
# Session 14's first call: scripts/device/h200_first_call.sh (ZINC_OLD at 651a2a2), then a
# per-kernel profile (`zinc bench --profile`, timestamps around every dispatch) of both files
# at this commit.
bash scripts/device/h200_first_call.sh
. scripts/device/common.sh
for f in q8b moe; do
  timeout 100 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --profile > $OUT/profile-$f.md 2>&1
  grep -E "^\|" $OUT/profile-$f.md | head -30
done
