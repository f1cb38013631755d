#!/bin/bash
# One GPU call (session 11's first, replacing session 10's h200_ab_binaries.sh): `zinc selftest`
# with and without the fused pre-norm, two ZINC binaries alternating on decode (HEAD, HEAD with
# --vk-fuse-norm true, and ZINC_OLD: session 9's 53ca8a5) on Qwen3-8B and Qwen3-30B-A3B, and
# HEAD's per-kernel GPU timestamps on both (`zinc bench --profile`). Needs $OUT, ZINC, ZINC_OLD
# and the Vulkan loader debs in .gl/: libvulkan1 and the libglvnd packages the NVIDIA driver's
# ICD loads through (libglvnd0 libegl1 libgl1 libglx0 libgles2 libopengl0; with libvulkan1
# alone no device is found).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig >/dev/null 2>&1
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
Z=${ZINC:-.dev/zinc}
O=${ZINC_OLD:-.dev/zinc-s9}
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
$Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
for x in "" "--vk-fuse-norm true"; do
  timeout 100 $Z selftest --backend vulkan $x > $OUT/selftest.md 2>&1
  echo "selftest [$x] rc=$? $(tail -1 $OUT/selftest.md)"; grep FAIL $OUT/selftest.md | head -5
done
wait
tps() { local b=$1; shift; echo "== $b $*: $(timeout 90 $b bench --backend vulkan "$@" 2>&1 | grep '^| qwen' | tail -1 | awk -F'|' '{print $(NF-1)}')"; }
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $O $M; tps $Z $M --vk-fuse-norm true; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $O $M; tps $Z $M --vk-fuse-norm true; done
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.md 2>&1
$Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.md 2>&1
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile --vk-fuse-norm true > $OUT/prof-8b-fuse.md 2>&1
head -c 3000 $OUT/prof-8b.md
