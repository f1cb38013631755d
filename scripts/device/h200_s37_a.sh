#!/bin/bash
# Session 37's first call (session 36's, plus split-K only on residual projections while mm-beside is on, the residual add in the mat-mul's store, and the gated activation in its rounding's dispatch) (carry .gl, .dev and .lbin), the most wanted first since a call may be
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
wait_synth
pick --vk-moe-skip /tmp/moe.gguf
[ $ok = 1 ] || WIN=""
echo "winners (selftest ok=$ok):$WIN"
llama_wait
VS_ZINC=$(for w in $WIN; do printf -- "--zinc-arg=%s " $w; done)
echo "vs_llama with: $VS_ZINC"
(OUT=$R; vs_llama)
if [ -n "$WIN" ]; then
  a1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3)
  echo "== 8B pp512, winners together: $a1 against $b1"
  a1=$(tsj -m /tmp/moe.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/moe.gguf -p 512 -n 0 -r 3)
  echo "== MoE pp512, winners together: $a1 against $b1"
  if echo "$WIN" | grep -q split-k && echo "$WIN" | grep -q mm-beside; then
    a1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3 $WIN --vk-split-shared true)
    echo "== 8B pp512, winners together with shared roundings split too: $a1"
  fi
fi
gpu_selftest; cp $OUT/selftest.md $R/
