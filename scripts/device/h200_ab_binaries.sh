#!/bin/bash
# One GPU call: two ZINC binaries alternating on decode (which one is faster on this instance),
# and `zinc selftest` with the fused pre-norm on (its scaled readers on a real GPU). Needs $OUT,
# the Vulkan loader debs in .gl/ (see docs/BENCHMARKS.md), ZINC (default .dev/zinc) and
# ZINC_OLD (default .dev/zinc-s9, session 9's 53ca8a5). About 2 minutes of device time.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig >/dev/null 2>&1
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
Z=${ZINC:-.dev/zinc}
O=${ZINC_OLD:-.dev/zinc-s9}
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
for x in "" "--vk-fuse-norm true"; do
  timeout 100 $Z selftest --backend vulkan $x > $OUT/selftest.md 2>&1
  echo "selftest [$x] rc=$? $(tail -1 $OUT/selftest.md)"; grep FAIL $OUT/selftest.md | head -5
done
wait
tps() { local b=$1; shift; echo "== $b $*: $(timeout 60 $b bench --backend vulkan "$@" 2>&1 | grep '^| qwen' | tail -1 | awk -F'|' '{print $(NF-1)}')"; }
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2 3; do tps $Z $M; tps $O $M; tps $Z $M --vk-fuse-norm true; done
