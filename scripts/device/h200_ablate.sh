#!/bin/bash
# One GPU call: where a decode step's time goes, by ablation. `zinc bench --ablate` measures
# generation on a synthetic Qwen3-8B, Qwen3-8B after 4,096 tokens and Qwen3-30B-A3B (all
# Q4_K_M, from `zinc synth`), then each test again without each kernel it ran, one kernel at a
# time (those runs' results are wrong, their timing real), and prints calls and µs a token per
# kernel. Needs $OUT, the Vulkan loader debs in .gl/ (see docs/BENCHMARKS.md) and ZINC (the
# release binary, default .dev/zinc). Extra `zinc bench` options (a tuning to ablate) go in
# $ZINC_ARGS. About 3 minutes of device time (most of it the 30B-A3B's synthesis and load).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
Z=${ZINC:-.dev/zinc}
[ -e /tmp/moe.gguf ] || $Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf 2>&1 | tail -1
A="--backend vulkan -p 0 -r 1 --ablate $ZINC_ARGS"
$Z bench -m /tmp/q8b.gguf -n 64 $A > $OUT/ablate-8b.md 2> $OUT/ablate-8b.err
$Z bench -m /tmp/q8b.gguf -n 64 -d 4096 $A > $OUT/ablate-8b-d4096.md 2> $OUT/ablate-8b-d4096.err
wait
$Z bench -m /tmp/moe.gguf -n 64 $A > $OUT/ablate-moe.md 2> $OUT/ablate-moe.err
for f in $OUT/ablate-*.err; do echo "== $f"; grep -A40 '^What each kernel costs' $f; done
