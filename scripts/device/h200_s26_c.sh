#!/bin/bash
# (Its --vk-early-poll / --vk-early-backoff were measured here and removed after: no help.)
# Session 26, third call: early weights' polling (sync_wait by atomics, by volatile loads, by
# loads with a backoff) on Qwen3-8B tg128 against the default (off), twice each in turn, with
# llama.cpp's CUDA build beside; then the three side-by-sides with the fastest setting if it
# beats the default by more than 1%, else at the defaults.
. scripts/device/common.sh
llama_beside
synth
wait_synth
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
E="--vk-early-weights true"
V=("" "$E" "$E --vk-early-poll 1" "$E --vk-early-poll 2 --vk-early-backoff 64" \
   "$E --vk-early-poll 2 --vk-early-backoff 512" "$E --vk-early-mask 2 --vk-early-poll 1" \
   "$E --vk-early-poll 1 --vk-early-touch 0")
for i in 1 2; do
  for k in "${!V[@]}"; do
    line=$(tps $Z $T ${V[$k]}); echo "$line"
    echo "$k $(echo "$line" | grep -oE '[0-9.]+ ± ' | tail -1 | cut -d' ' -f1)" >> $OUT/rates.txt
  done
done
best=$(awk '{s[$1]+=$2; n[$1]++} END {for (k in s) print s[k]/n[k], k}' $OUT/rates.txt | sort -rn | head -1)
base=$(awk '$1==0 {s+=$2; n++} END {print s/n}' $OUT/rates.txt)
echo "mean tok/s by variant: $(awk '{s[$1]+=$2; n[$1]++} END {for (k in s) printf "%s:%.1f ", k, s[k]/n[k]}' $OUT/rates.txt); best $best, default $base"
k=${best#* }
if [ "$k" != 0 ] && awk -v b="${best% *}" -v a="$base" 'BEGIN {exit !(b > 1.01 * a)}'; then
  echo "side-by-side with: ${V[$k]}"
  VS_ZINC=$(for w in ${V[$k]}; do printf -- "--zinc-arg=%s " "$w"; done)
else
  echo "side-by-side at the defaults"; VS_ZINC=""
fi
llama_wait
VS_ZINC="$VS_ZINC" vs_llama
