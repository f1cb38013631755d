#!/bin/bash
# Ready for the next call (carry .gl, .dev and .lbin). Session 35 ran out of device time before
# these: the prompt's q/k prep a subgroup a head (qk_prep_rows.comp, `--vk-prep-rows`),
# act_quant.comp's block maxima by subgroup shuffles (`--vk-act-quant-sg`) and split-K for the
# prompt mat-muls of fewer than 256 workgroups (`--vk-split-k`: matmul_cm_split.comp and
# split_sum.comp, never yet run on a GPU), all off by default until this measures them, through
# the selftest and each against its option off on the prompts (alternating); session 34's
# prompt router at 8 tokens a column held to 1 token a
# column bit for bit (every position's logits of a 20-token Qwen3-30B-A3B prompt, 16 lanes a
# row); both models' per-test profiles; the side-by-side with llama.cpp's CUDA build.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
llama_beside
gpu_selftest; cp $OUT/selftest.md $R/
timeout 60 $Z selftest --backend vulkan --vk-prep-rows true --vk-act-quant-sg true \
  --vk-split-k true > $R/selftest-new.md 2>&1
echo "selftest, the three new options on: rc=$? $(tail -1 $R/selftest-new.md)"
grep -iE "fail" $R/selftest-new.md | head -3
wait_synth
ab "--vk-prep-rows true" "--vk-prep-rows false" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "--vk-prep-rows true" "--vk-prep-rows false" -m /tmp/moe.gguf -p 512 -n 0 -r 3
ab "--vk-act-quant-sg true" "--vk-act-quant-sg false" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "--vk-split-k true" "--vk-split-k false" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "--vk-split-k true" "--vk-split-k false" -m /tmp/moe.gguf -p 512 -n 0 -r 3
T=$(seq -s, 11 30)
for n in 1 8; do
  timeout 60 $Z logits --backend vulkan -m /tmp/moe.gguf --tokens $T --vk-threads-per-row 16 \
    --vk-matvec-tokens $n -o /tmp/l$n.json > /dev/null 2>&1; echo "logits $n rc=$?"
done
cmp /tmp/l1.json /tmp/l8.json && echo "router: same bits at 1 and 8 tokens a column"
for m in q8b moe; do
  timeout 150 $Z bench --backend vulkan -m /tmp/$m.gguf -p 512 -n 128 -r 2 --profile \
    > $R/profile-$m.md 2>&1; echo "profile $m rc=$?"
  grep -A14 "one timed pp512 run" $R/profile-$m.md
done
llama_wait
(OUT=$R; vs_llama)
