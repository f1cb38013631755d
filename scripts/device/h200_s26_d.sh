#!/bin/bash
# Session 26, fourth call: the driver's register and shared-memory counts of the decode
# mat-vecs with early weights (matvec_dec.comp's WAIT variants) and without.
. scripts/device/common.sh
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
for o in "" "--vk-early-weights true"; do
  echo "== stats $o"
  timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats $o > $OUT/stats.txt 2>&1
  grep -iE "matvec_dec|norm_quant|attn" $OUT/stats.txt | head -16
done
