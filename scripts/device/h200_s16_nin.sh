#!/bin/bash
# (A record of a call that ran: `--vk-norm-in-matvec` existed only in that call's build, an
# experiment not kept — docs/BENCHMARKS.md, session 16.)
# Session 16, second GPU call: NIN with the norm's sum in chunk order (every workgroup's
# prologue one round of loads, the sums in turn, the tree) and only for mat-vecs of up to 8,192
# rows (q, k, v; not the 8B's gate and up), against the norm as its own stage, alternating on
# one build; `zinc selftest` both ways; the llama.cpp build of the first call finished or resumed
# beside it (.lcu/).
export LCU=$PWD/.lcu
. scripts/device/common.sh
ls -la /tmp/q8b.gguf /tmp/moe.gguf 2>/dev/null || { synth; wait_synth; }
(build_llama 12 > $OUT/llama-build.txt 2>&1 &)
gpu_selftest
timeout 100 $Z selftest --backend vulkan --vk-norm-in-matvec false > $OUT/selftest-off.md 2>&1
echo "selftest (NIN off) rc=$? $(tail -1 $OUT/selftest-off.md)"
ON="--vk-norm-in-matvec true"
OFF="--vk-norm-in-matvec false"
echo "== A/B: NIN on / off"
ab "$ON" "$OFF" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "$ON" "$OFF" -m /tmp/moe.gguf -p 0 -n 128 -r 2
ab "$ON" "$OFF" -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
timeout 60 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile 2>&1 | grep "|" | head -24 > $OUT/profile-moe.txt
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile 2>&1 | grep "|" | head -24 > $OUT/profile-8b.txt
sleep 5; cat $OUT/llama-build.txt; ls -la $LB
