#!/bin/bash
# Session 37's shortest call (~4 minutes; carry .gl and .dev): Qwen3-8B only — the selftest with
# every unmeasured prompt option on (NEW_OPTS) and session 37's extra selftests, each option
# against itself off on pp512, then the winners together against none. No llama.cpp.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
selftest_new
selftest_extra
wait
WIN=""
for o in --vk-split-k --vk-mm-beside --vk-glu-round --vk-norm-round --vk-mm-add --vk-prep-rows --vk-act-quant-sg; do
  case $o in --vk-glu-round|--vk-norm-round|--vk-mm-add) [ $add_ok = 1 ] || continue ;; esac
  pick $o /tmp/q8b.gguf
done
echo "winners (selftest ok=$ok):$WIN"
if [ -n "$WIN" ]; then
  a1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3)
  echo "== 8B pp512, winners together: $a1 against $b1"
fi
