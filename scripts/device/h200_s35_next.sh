#!/bin/bash
# Ready for the next call (carry .gl and .dev): the prompt router's 8 tokens a column held to one
# token a column bit for bit on this driver — every position's logits of a 20-token prompt of
# Qwen3-30B-A3B, both at 16 lanes a row (lavapipe's test proves it there only) —, the selftest,
# and `zinc bench --profile`'s new per-test tables (the timed runs alone) for both models'
# prompts and generation: where the prompt's time goes now (attn_cm, qk_prep) without the
# warm-ups' one-time f16 weight copies.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth; wait_synth
T=$(seq -s, 11 30)
for n in 1 8; do
  timeout 60 $Z logits --backend vulkan -m /tmp/moe.gguf --tokens $T --vk-threads-per-row 16 \
    --vk-matvec-tokens $n -o /tmp/l$n.json > /dev/null 2>&1; echo "logits $n rc=$?"
done
md5sum /tmp/l1.json /tmp/l8.json; cmp /tmp/l1.json /tmp/l8.json && echo "same bits"
gpu_selftest; cp $OUT/selftest.md $R/
for m in q8b moe; do
  timeout 150 $Z bench --backend vulkan -m /tmp/$m.gguf -p 512 -n 128 -r 2 --profile \
    > $R/profile-$m.md 2>&1; echo "profile $m rc=$?"
  grep -A12 "one timed pp512 run" $R/profile-$m.md
done
