#!/bin/bash
# Session 37's shortest call (~4 minutes; carry .gl and .dev): Qwen3-8B only — the selftest with
# every unmeasured prompt option on (NEW_OPTS) and session 37's extra selftests, each option
# against itself off on pp512, then the winners together against none. No llama.cpp.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
selftest_new
timeout 60 $Z selftest --backend vulkan --vk-mm-add true --vk-mm-beside true --vk-glu-round true --vk-norm-round true --filter prompt > $R/selftest-add.md 2>&1 || echo "prompt selftest rc=$?" >> $R/selftest-add.md
for f in gate_up_act "fused quantization"; do
  timeout 60 $Z selftest --backend vulkan --vk-glu-round true --vk-norm-round true --filter "$f" >> $R/selftest-add.md 2>&1 || echo "$f selftest rc=$?" >> $R/selftest-add.md
done
echo "selftest mm-add, glu-round, norm-round: $(grep -E 'cases|rc=' $R/selftest-add.md | tr '\n' ' ')"
wait
WIN=""
for o in --vk-split-k --vk-mm-beside --vk-glu-round --vk-norm-round --vk-mm-add --vk-prep-rows --vk-act-quant-sg; do
  pick $o /tmp/q8b.gguf
done
echo "winners (selftest ok=$ok):$WIN"
if [ -n "$WIN" ]; then
  a1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3)
  echo "== 8B pp512, winners together: $a1 against $b1"
fi
