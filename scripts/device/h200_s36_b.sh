#!/bin/bash
# h200_s36_a.sh cut to what ~5 minutes of a call hold (carry .gl, .dev and .lbin): Qwen3-8B
# only — the selftest with the five new prompt options on, each of the four dense ones against
# itself off on pp512, then the side-by-side with llama.cpp's CUDA build (prompt 512,
# generation 128) with those that won by more than 1%.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
llama_beside
NEW="--vk-split-k true --vk-mm-beside true --vk-prep-rows true --vk-act-quant-sg true --vk-moe-skip true"
timeout 60 $Z selftest --backend vulkan $NEW > $R/selftest-new.md 2>&1
rc=$?
echo "selftest, the five new options on: rc=$rc $(tail -1 $R/selftest-new.md)"
grep -iE "fail" $R/selftest-new.md | head -5
ok=0; [ $rc = 0 ] && ! grep -qiE "[1-9][0-9]* failed" $R/selftest-new.md && ok=1
while pgrep -f "preset qwen3-8b" > /dev/null; do sleep 2; done
tsj() {
  timeout 60 $Z bench --backend vulkan "$@" -o json 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["avg_ts"])' 2>/dev/null || echo 0
}
WIN=""
pick() {
  local o=$1 m=$2 a1 b1
  a1=$(tsj -m $m -p 512 -n 0 -r 3 $o true); b1=$(tsj -m $m -p 512 -n 0 -r 3 $o false)
  local r=$(python3 -c "print(f'{$a1/max($b1,1e-9):.4f}')")
  echo "== $o on $m pp512: on $a1, off $b1 (ratio $r)"
  python3 -c "import sys; sys.exit(0 if $r > 1.01 else 1)" && WIN="$WIN $o true"
}
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
