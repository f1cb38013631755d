#!/bin/bash
# Session 39's first call (carry .gl and .dev): the L2 prefetcher (`--vk-prefetch MB`, a second
# queue reading the next decode mat-vec's weights during the stages before it). Greedy text with
# and without it (the same tokens: it only reads), then Qwen3-8B tg128 alternating off / on,
# marks only (what the marks cost), other sizes, shapes and lookbacks; the kernels' clock with
# and without it; Qwen3-8B after 4,096 tokens and Qwen3-30B-A3B off / on.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth
wait_8b
echo "[${SECONDS}s] greedy text, off then on (16 MiB)"
for o in "" "--vk-prefetch 16" "--vk-prefetch 48 --vk-prefetch-lookback 3"; do
  timeout 60 $Z run -m /tmp/q8b.gguf --backend vulkan -p "The quick brown fox" -n 48 --temp 0 $o \
    > "$OUT/run${o// /_}.txt" 2>&1; echo "rc=$? $(md5sum < "$OUT/run${o// /_}.txt" | cut -c1-8) $o"
done
tail -c 300 $OUT/run.txt; echo; tail -c 300 $OUT/run_--vk-prefetch_16.txt; echo
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
echo "[${SECONDS}s] Qwen3-8B tg128: off / 16 MiB"
ab "" "--vk-prefetch 16" $T
echo "[${SECONDS}s] marks only, 8, 24, 32, 48 MiB; lookback 2; shapes"
for o in "--vk-prefetch 0" "--vk-prefetch 8" "--vk-prefetch 24" "--vk-prefetch 32" "--vk-prefetch 48" \
  "--vk-prefetch 16 --vk-prefetch-lookback 2" "--vk-prefetch 16 --vk-prefetch-shape 132x8" \
  "--vk-prefetch 16 --vk-prefetch-shape 64x4" "--vk-prefetch 16 --vk-prefetch-delay 512"; do
  tps $Z $T $o
done
tps $Z $T
echo "[${SECONDS}s] the clock, off and on"
clocked off -m /tmp/q8b.gguf -p 0 -n 16 -r 1
clocked on16 -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 16
wait_synth
echo "[${SECONDS}s] after 4,096 tokens; the MoE"
ab "" "--vk-prefetch 16" -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
ab "" "--vk-prefetch 16" -m /tmp/moe.gguf -p 0 -n 128 -r 2
echo "[${SECONDS}s] done"
