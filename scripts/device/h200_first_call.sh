#!/bin/bash
# One GPU call, a session's first: `zinc selftest` with and without the fused pre-norm, two ZINC
# binaries alternating on decode (ZINC, ZINC with --vk-fuse-norm true, and ZINC_OLD: an earlier
# commit's build) on Qwen3-8B and Qwen3-30B-A3B, each run's share of time the host waited and the
# device worked (with the device's idle µs a token where ZINC prints it), and ZINC's per-kernel
# GPU timestamps on both (`zinc bench --profile`). Session 11 ran it with ZINC_OLD at 53ca8a5;
# next: ZINC_OLD at ff3caa6, to measure route.glsl's one read of the logits (7d8a92a).
# About 4 minutes of device time. Needs $OUT, ZINC, ZINC_OLD and the Vulkan loader debs in
# .gl/: libvulkan1 and the libglvnd packages the NVIDIA driver's ICD loads through (libglvnd0
# libegl1 libgl1 libglx0 libgles2 libopengl0; with libvulkan1 alone no device is found).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig >/dev/null 2>&1
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
Z=${ZINC:-.dev/zinc}
O=${ZINC_OLD:-.dev/zinc-old}
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
for x in "" "--vk-fuse-norm true"; do
  timeout 100 $Z selftest --backend vulkan $x > $OUT/selftest.md 2>&1
  echo "selftest [$x] rc=$? $(tail -1 $OUT/selftest.md)"; grep FAIL $OUT/selftest.md | head -5
done
wait
tps() {
  local b=$1; shift
  echo "== $b $*: $(timeout 90 $b bench --backend vulkan "$@" 2>&1 | grep -E '^\| qwen|host waited' \
    | tr '\n' ' ' | sed 's/zinc bench://' | awk -F'|' '{print $1 $(NF-1)}')"
}
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $O $M; tps $Z $M --vk-fuse-norm true; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $O $M; tps $Z $M --vk-fuse-norm true; done
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.md 2>&1
$Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.md 2>&1
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile --vk-fuse-norm true > $OUT/prof-8b-fuse.md 2>&1
head -c 3000 $OUT/prof-8b.md
