#!/bin/bash
# (A record of a call that ran: `--vk-norm-in-matvec` existed only in that call's build, an
# experiment not kept — docs/BENCHMARKS.md, session 16.)
# Session 16, first GPU call: the pre-norms read by their mat-vecs (matvec_dec.comp's NIN,
# `--vk-norm-in-matvec`, on by default) against the norm as its own stage, on one build,
# alternating; the ceiling (the norms left out, results wrong); `zinc selftest` both ways.
# llama.cpp's CUDA build runs beside it into .lcu/ (git-ignored, so a later call on the same
# machine reuses it). Needs $OUT, .gl/, .dev/zinc, .dev/llama-src.tar.xz.
export LCU=$PWD/.lcu
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
(build_llama 12 > $OUT/llama-build.txt 2>&1 &)
wait_synth
gpu_selftest
timeout 100 $Z selftest --backend vulkan --vk-norm-in-matvec false > $OUT/selftest-off.md 2>&1
echo "selftest (NIN off) rc=$? $(tail -1 $OUT/selftest-off.md)"
ON="--vk-norm-in-matvec true"
OFF="--vk-norm-in-matvec false"
echo "== A/B: NIN on / off"
ab "$ON" "$OFF" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
ab "$ON" "$OFF" -m /tmp/moe.gguf -p 0 -n 128 -r 2
ab "$ON" "$OFF" -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
echo "== ceiling: every norm_quant left out (wrong results), NIN off"
tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2 $OFF --vk-skip norm_quant
tps $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 $OFF --vk-skip norm_quant
echo "== profile, NIN on"
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile 2>&1 | head -40 > $OUT/profile-8b.txt
timeout 60 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile 2>&1 | head -40 > $OUT/profile-moe.txt
cat $OUT/llama-build.txt 2>/dev/null
