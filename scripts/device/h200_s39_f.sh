#!/bin/bash
# Session 39's sixth call: lean prefetchers (workgroups of 32 or 64 invocations with many loads
# in flight), since at 128 workgroups of 256 the gate/up's workgroups could not all start
# (20.6 µs to start them) though each ran 17% faster from the cache. Qwen3-8B tg128.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
tps $Z $T --vk-prefetch 0
for o in "16 --vk-prefetch-wg 32 --vk-prefetch-shape 132x16" "16 --vk-prefetch-wg 32 --vk-prefetch-shape 264x16" \
  "16 --vk-prefetch-wg 32 --vk-prefetch-shape 528x8" "16 --vk-prefetch-wg 64 --vk-prefetch-shape 132x16" \
  "16 --vk-prefetch-wg 64 --vk-prefetch-shape 264x8" "32 --vk-prefetch-wg 32 --vk-prefetch-shape 264x16" \
  "48 --vk-prefetch-lookback 3 --vk-prefetch-wg 32 --vk-prefetch-shape 264x16"; do
  tps $Z $T --vk-prefetch $o
done
tps $Z $T --vk-prefetch 0
tps $Z $T
clocked lean -m /tmp/q8b.gguf -p 0 -n 16 -r 1 --vk-prefetch 16 --vk-prefetch-wg 32 --vk-prefetch-shape 264x16
echo "[${SECONDS}s] done"
