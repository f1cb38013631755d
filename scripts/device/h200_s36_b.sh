#!/bin/bash
# h200_s36_a.sh cut to what ~5 minutes of a call hold (carry .gl, .dev and .lbin): Qwen3-8B
# only — the selftest with the five new prompt options on, each of the four dense ones against
# itself off on pp512, then the side-by-side with llama.cpp's CUDA build (prompt 512,
# generation 128) with those that won by more than 1%.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
llama_beside
selftest_new
wait_8b
WIN=""
pick --vk-split-k /tmp/q8b.gguf
pick --vk-mm-beside /tmp/q8b.gguf
pick --vk-prep-rows /tmp/q8b.gguf
pick --vk-act-quant-sg /tmp/q8b.gguf
[ $ok = 1 ] || WIN=""
echo "winners (selftest ok=$ok):$WIN"
llama_wait
VS_ZINC=$(for w in $WIN; do printf -- "--zinc-arg=%s " $w; done)
echo "vs_llama with: $VS_ZINC"
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 $VS_ZINC \
  -m /tmp/q8b.gguf -p 512 -n 128 -r 2 --bandwidth-gbs $bw --out $R/cuda-d0
