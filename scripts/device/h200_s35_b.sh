#!/bin/bash
# Session 35, second call (carry .gl, .dev and .lbin): the prompt's q/k prep a subgroup a head
# (qk_prep_rows.comp) held to the bit of rms_norm + rope by the selftest, against qk_prep.comp
# (--vk-prep-rows false) alternating on both models' prompt 512; split-K for the prompt
# mat-muls of fewer than 256 workgroups, the o and down projections' residual added by its sum
# (selftest, and against --vk-split-k false on both
# models' prompt 512); the 8B prompt's profile, then
# the side-by-side with llama.cpp's CUDA build (vs_llama) with the one-pass prompt attention
# (attn_fa.comp, first call: 8B pp512 10,828 against 9,947 with the two-pass attn_cm).
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
llama_beside
gpu_selftest; cp $OUT/selftest.md $R/
grep -E "qk_norm_rope_store.*rows=(5|6|7|9) " $R/selftest.md
timeout 60 $Z selftest --backend vulkan --filter qk_norm --vk-prep-rows false > $OUT/st.md 2>&1
echo "selftest qk_norm, prep rows off: rc=$? $(tail -1 $OUT/st.md)"
timeout 60 $Z selftest --backend vulkan --vk-split-k false > $OUT/st.md 2>&1
echo "selftest, split-K off: rc=$? $(tail -1 $OUT/st.md)"; grep -i fail $OUT/st.md | head -3
# Should split-K fail the selftest where the rest passes, the side-by-side goes without it.
if grep -q FAIL $R/selftest.md && ! grep -q FAIL $OUT/st.md; then
  export VS_ZINC="--zinc-arg=--vk-split-k --zinc-arg=false"; echo "side-by-side without split-K"
fi
wait_synth
ab "--vk-prep-rows true" "--vk-prep-rows false" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "--vk-prep-rows true" "--vk-prep-rows false" -m /tmp/moe.gguf -p 512 -n 0 -r 3
ab "--vk-split-k true" "--vk-split-k false" -m /tmp/q8b.gguf -p 512 -n 0 -r 3
ab "--vk-split-k true" "--vk-split-k false" -m /tmp/moe.gguf -p 512 -n 0 -r 3
timeout 120 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 512 -n 0 -r 2 --profile \
  > $R/profile-q8b.md 2>&1; echo "profile rc=$?"
grep -A14 "one timed pp512 run" $R/profile-q8b.md
llama_wait
OUT=$R vs_llama
