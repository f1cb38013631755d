#!/bin/bash
# One GPU call, a session's first: `zinc selftest`, then decode timings with each run's host-
# waiting share, device span, idle µs between tokens and dependent stages a token (zinc bench
# prints them) — Qwen3-8B tg128, after 4,096 tokens, Qwen3-30B-A3B tg128 — where ZINC_OLD names
# an earlier build, alternating with ZINC; the first recording's piece at 4 commands
# (`--vk-chunks 4x64`, unmeasured since the host began polling its fences); then what each
# kernel takes on its own (`zinc bench --ablate --twice`) on both files, and what the driver
# compiled each decode kernel to (`--vk-pipeline-stats`: registers, hence occupancy). Session 13 ran its
# parts as h200_s13_*.sh (docs/BENCHMARKS.md). About 6 minutes of device time. Needs $OUT,
# ZINC and the Vulkan loader debs in .gl/ (see common.sh).
. scripts/device/common.sh
synth
gpu_selftest
wait
decode_ab --vk-chunks 4x64
# What a stage costs as a pipeline barrier, and as workgroups meeting inside one dispatch
# (whether a decode step could synchronize inside fewer dispatches).
$Z sync-cost --backend vulkan --rounds 2000 2>&1 | tee $OUT/sync-cost.md
# What the driver compiled each kernel to (registers, …), for occupancy.
$Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats 2>&1 | grep -A80 "as the driver compiled" > $OUT/pipelines-8b.txt
head -40 $OUT/pipelines-8b.txt
for f in q8b moe; do
  timeout 100 $Z bench --backend vulkan -m /tmp/$f.gguf -p 0 -n 32 -r 1 --ablate --twice > $OUT/twice-$f.md 2>&1
  grep -E "^\|" $OUT/twice-$f.md | head -16
done
