#!/bin/bash
# (A record of a call that ran: `--vk-norm-in-matvec` existed only in that call's build, an
# experiment not kept — docs/BENCHMARKS.md, session 16.)
# Session 16, third GPU call: NIN with its row staged through shared memory (coalesced loads;
# matvec_dec.comp's nx_x) against the norm as its own stage, alternating on one build, while
# llama.cpp's CUDA build of the earlier calls finishes (.lcu/); then the side-by-side at the
# defaults, and its generation tests again with NIN off.
export LCU=$PWD/.lcu
. scripts/device/common.sh
ls -la /tmp/q8b.gguf /tmp/moe.gguf 2>/dev/null || { synth; wait_synth; }
(build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
gpu_selftest
ON="--vk-norm-in-matvec true"
OFF="--vk-norm-in-matvec false"
echo "== A/B: NIN on / off"
ab "$ON" "$OFF" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "$ON" "$OFF" -m /tmp/moe.gguf -p 0 -n 128 -r 2
ab "$ON" "$OFF" -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile 2>&1 | grep "|" | head -16 > $OUT/profile-8b.txt
timeout 60 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile 2>&1 | grep "|" | head -16 > $OUT/profile-moe.txt
while [ ! -e $OUT/llama-done ]; do sleep 3; done
cat $OUT/llama-build.txt
[ -x $LB ] || { echo "no llama-bench"; tail -5 $OUT/build.log; exit 1; }
vs_llama
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 --zinc-arg=--vk-norm-in-matvec --zinc-arg=false"
echo "== NIN off: Qwen3-8B generation 128"
$B -m /tmp/q8b.gguf -p 0 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0-off
echo "== NIN off: Qwen3-30B-A3B generation 128"
$B -m /tmp/moe.gguf -p 0 -n 128 -r 2 --out $OUT/cuda-moe-off
