#!/bin/bash
# Session 13's last call: llama.cpp's CUDA build in the background (niced, 12 cores) while the
# GPU runs `zinc selftest`, Q6_K mat-vecs at two pieces a lane (`--vk-decode-pieces 2`) against
# the default, and what each kernel takes on its own (`zinc bench --ablate --twice`) on both
# files; then the side-by-side of scripts/device/h200_cuda_vs_llama.sh. Needs $OUT, ZINC,
# LLAMA_SRC (see h200_cuda_vs_llama.sh) and .gl/ (common.sh). About 8 minutes.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
build_llama 12 > /dev/null &
BUILD=$!
gpu_selftest
while [ ! -s /tmp/moe.gguf ] || pgrep -f "zinc synth" >/dev/null; do sleep 2; done
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  tps $Z $M; tps $Z $M --vk-decode-pieces 2
done
for f in q8b moe; do
  timeout 90 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --ablate --twice > $OUT/twice-$f.md 2>&1
  grep -E "^\|" $OUT/twice-$f.md | head -16
done
wait $BUILD; cat $OUT/build-time.txt
vs_llama
