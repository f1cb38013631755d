#!/bin/bash
# Session 37's short call (h200_s37_a.sh without the side-by-side after 4,096 tokens and the default selftest, the 8B's side-by-side before the MoE's pick; for a call of ~6 minutes) (session 36's, plus split-K only on residual projections while mm-beside is on, the residual add in the mat-mul's store, and the gated activation in its rounding's dispatch) (carry .gl, .dev and .lbin), the most wanted first since a call may be
# cut at its limit: the selftest with the five prompt options not yet run on a GPU
# (`--vk-split-k`, `--vk-mm-beside`, `--vk-prep-rows`, `--vk-act-quant-sg`, `--vk-moe-skip`),
# each against its option off on Qwen3-8B pp512 (the last on Qwen3-30B-A3B); the side-by-side with llama.cpp's CUDA
# build with those that won by more than 1% (where the selftest passed with all five on), then
# the winners together against none and the default selftest.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
llama_beside
selftest_new
selftest_extra
wait_8b
WIN=""
pick --vk-split-k /tmp/q8b.gguf
pick --vk-mm-beside /tmp/q8b.gguf
pick --vk-prep-rows /tmp/q8b.gguf
pick --vk-act-quant-sg /tmp/q8b.gguf
if [ $add_ok = 1 ]; then
  pick --vk-mm-add /tmp/q8b.gguf; pick --vk-glu-round /tmp/q8b.gguf; pick --vk-norm-round /tmp/q8b.gguf
fi
[ $ok = 1 ] || WIN=""
echo "winners (selftest ok=$ok):$WIN"
llama_wait
vs() { python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 $(for w in $WIN; do printf -- "--zinc-arg=%s " $w; done) "$@"; }
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
echo "== Qwen3-8B: prompt 512, generation 128 (with:$WIN)"
vs -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs $bw --out $R/cuda-d0
if [ -n "$WIN" ]; then
  a1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3)
  echo "== 8B pp512, winners together: $a1 against $b1"
fi
wait_synth
pick --vk-moe-skip /tmp/moe.gguf
[ $ok = 1 ] || WIN=""
echo "== Qwen3-30B-A3B: prompt 512, generation 128 (with:$WIN)"
vs -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $R/cuda-moe
