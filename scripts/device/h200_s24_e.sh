#!/bin/bash
# Session 24, fifth call: the in-dispatch FFN norm once more, its row through a scratch buffer in
# device memory (`--vk-norm-in-glu-global true`, matvec_dec.comp's NINX: the products read it as
# they read any input) where the first two calls' shared-memory row compiled to 94 registers.
# The driver's register counts of the three gate/up forms, Qwen3-8B tg128 alternating, after
# 4,096 tokens once each, a profile of the scratch form.
. scripts/device/common.sh
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
N="--vk-norm-in-glu true"
G="--vk-norm-in-glu true --vk-norm-in-glu-global true"
for o in "" "$N" "$G"; do
  timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats $o 2>&1 \
    | grep "matvec_dec_Q4_K \[256"
done
timeout 100 $Z selftest --backend vulkan $G > $OUT/selftest-ninx.md 2>&1
echo "selftest (NINX) rc=$? $(tail -1 $OUT/selftest-ninx.md)"
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $T; tps $Z $T $G; done
tps $Z $T $N
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D; tps $Z $D $G
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile $G 2>&1 | grep "matvec_dec_Q4_K 12288\|norm_quant"
