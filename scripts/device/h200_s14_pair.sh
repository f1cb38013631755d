#!/bin/bash
# Session 14's third call: `zinc matvec-cost` now cycling through copies of each weight (256 MB
# of them: a decode step reads every weight from memory, not from the L2 its last run left; the
# second call's figures had the smaller weights partly in L2), at the default kernel settings
# and with Q4_K lanes taking sub-block pairs (--vk-decode-pair) in several shapes; then tok/s of
# the three decode tests, pairs off and on alternating.
. scripts/device/common.sh
synth
wait
mc() {
  local f=$1; shift
  echo "== $f $*"
  timeout 90 $Z matvec-cost --backend vulkan -m /tmp/$f.gguf "$@" > $OUT/mc.tmp 2>&1
  echo "== $f $*" >> $OUT/matvec-$f.md; cat $OUT/mc.tmp >> $OUT/matvec-$f.md
  grep -E "^\| (blk|output)" $OUT/mc.tmp | awk -F'|' '{printf "%s%s %s/%s; ", $3, $4, $8, $10} END {print ""}'
  grep -iE "error" $OUT/mc.tmp | head -2
}
Q6="--vk-decode-q6k 32x1x128"
for o in "" "--vk-decode-pair true" "--vk-decode-kquant 32x2x128 $Q6 --vk-decode-pair true" \
  "--vk-decode-kquant 64x1x128 $Q6 --vk-decode-pair true" "--vk-decode-kquant 16x1x128 $Q6 --vk-decode-pair true" \
  "--vk-decode-passes 2 --vk-decode-pair true" "--vk-decode-kquant 32x2x128 $Q6"; do
  mc q8b $o
done
mc moe
mc moe --vk-decode-pair true
rm -f $OUT/mc.tmp
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096" \
  "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for p in false true false true; do tps $Z $M --vk-decode-pair $p; done
  tps $Z $M --vk-decode-pair true --vk-decode-kquant 32x2x128 $Q6
done
