#!/bin/bash
# Session 14's second call: every decode mat-vec shape of both files as a dependent stage, against
# a dispatch of as many workgroups that only reads its bytes (`zinc matvec-cost`), at the
# default kernel settings and each alternative below (full tables in $OUT/matvec-*.md, one line
# a shape here: format rows×cols, mat-vec µs, read-only µs); then tok/s of the three decode tests
# with the loads of 1 (default), 2 and 4 passes issued before their math.
. scripts/device/common.sh
synth
wait
mc() {
  local f=$1; shift
  echo "== $f $*"
  timeout 60 $Z matvec-cost --backend vulkan -m /tmp/$f.gguf "$@" > $OUT/mc.tmp 2>&1
  echo "== $f $*" >> $OUT/matvec-$f.md; cat $OUT/mc.tmp >> $OUT/matvec-$f.md
  grep -E "^\| (blk|output)" $OUT/mc.tmp | awk -F'|' '{printf "%s%s %s/%s; ", $3, $4, $7, $9} END {print ""}'
  grep -iE "error" $OUT/mc.tmp | head -2
}
for f in q8b moe; do
  for o in "" "--vk-decode-passes 2" "--vk-decode-passes 4" "--vk-decode-pieces 1" \
    "--vk-decode-pieces 4" "--vk-decode-kquant 32x1x256" "--vk-decode-kquant 32x2x128" \
    "--vk-decode-kquant 16x1x128" "--vk-decode-kquant 64x1x128" "--loads 1" "--loads 8"; do
    mc $f $o
  done
done
rm -f $OUT/mc.tmp
for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096" \
  "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
  for p in 1 2 4 1 2 4; do tps $Z $M --vk-decode-passes $p; done
done
