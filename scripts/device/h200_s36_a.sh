#!/bin/bash
# Session 36's first call (carry .gl, .dev and .lbin), the most wanted first since a call may be
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
wait_8b
WIN=""
pick --vk-split-k /tmp/q8b.gguf
pick --vk-mm-beside /tmp/q8b.gguf
pick --vk-prep-rows /tmp/q8b.gguf
pick --vk-act-quant-sg /tmp/q8b.gguf
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
fi
gpu_selftest; cp $OUT/selftest.md $R/
