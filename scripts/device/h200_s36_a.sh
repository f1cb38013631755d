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
NEW="--vk-split-k true --vk-mm-beside true --vk-prep-rows true --vk-act-quant-sg true --vk-moe-skip true"
timeout 60 $Z selftest --backend vulkan $NEW > $R/selftest-new.md 2>&1
rc=$?
echo "selftest, the five new options on: rc=$rc $(tail -1 $R/selftest-new.md)"
grep -iE "fail" $R/selftest-new.md | head -5
ok=0; [ $rc = 0 ] && ! grep -qiE "[1-9][0-9]* failed" $R/selftest-new.md && ok=1
while pgrep -f "preset qwen3-8b" > /dev/null; do sleep 2; done
# `tsj ARGS…`: one `zinc bench` on Vulkan, its first test's tok/s.
tsj() {
  timeout 90 $Z bench --backend vulkan "$@" -o json 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["avg_ts"])' 2>/dev/null || echo 0
}
# `pick OPT MODEL`: MODEL pp512 with `OPT true`, then `OPT false` (session 35's alternating runs
# agreed within 0.1%); OPT goes to WIN where it is more than 1% ahead.
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
