#!/bin/bash
# One GPU call, a session's first: `zinc selftest`, then decode timings alternating ZINC, ZINC_OLD
# (an earlier commit's build) and ZINC without its compute-to-compute barriers (`--vk-skip
# barrier`: timing only, results wrong — the most a step could gain if consecutive dispatches
# overlapped instead of draining the GPU between them) on Qwen3-8B (empty context and after
# 4,096 tokens) and Qwen3-30B-A3B, each run with its share of time the host waited, the device's
# span and its idle µs between tokens; then ZINC's per-kernel GPU timestamps on both
# (`zinc bench --profile`). Session 12 ran it with ZINC_OLD at ff3caa6 (before route.glsl's one
# read of the logits and the step clock): no difference; without barriers 2.0x (8B) and 2.2x
# (30B-A3B) — which h200_barriers.sh and a chained-dispatch experiment then traced to the
# dependencies themselves, not to how they are expressed (docs/BENCHMARKS.md, session 12).
# About 6 minutes of device time. Needs $OUT, ZINC, ZINC_OLD and the Vulkan loader debs in
# .gl/: libvulkan1 and the libglvnd packages the NVIDIA driver's ICD loads through (libglvnd0
# libegl1 libgl1 libglx0 libgles2 libopengl0; with libvulkan1 alone no device is found).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig >/dev/null 2>&1
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
Z=${ZINC:-.dev/zinc}
O=${ZINC_OLD:-.dev/zinc-old}
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
timeout 100 $Z selftest --backend vulkan > $OUT/selftest.md 2>&1
echo "selftest rc=$? $(tail -1 $OUT/selftest.md)"; grep FAIL $OUT/selftest.md | head -5
wait
tps() {
  local b=$1; shift
  echo "== $b $*: $(timeout 90 $b bench --backend vulkan "$@" 2>&1 | grep -E '^\| qwen|host waited|spanned|stages' \
    | tr '\n' ' ' | sed 's/zinc bench://g' | awk -F'|' '{print $1 $(NF-1) $NF}')"
}
L="--vk-skip barrier"
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $O $M; tps $Z $M $L; done
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $M; tps $Z $M $L; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $O $M; tps $Z $M $L; done
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.md 2>&1
$Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.md 2>&1
head -c 2500 $OUT/prof-moe.md
