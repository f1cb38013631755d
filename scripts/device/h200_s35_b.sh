#!/bin/bash
# Session 35, second call (carry .gl, .dev and .lbin). New since the first call: the prompt's
# q/k prep a subgroup a head (qk_prep_rows.comp, `--vk-prep-rows`), and split-K for prompt
# mat-muls of fewer than 256 workgroups with the o and down projections' residual added by its
# sum (`--vk-split-k`). The selftest (split-K on and off), each new piece against its option
# off on the 8B prompt (alternating), the side-by-side with llama.cpp's CUDA build (vs_llama;
# without split-K should it alone fail the selftest), split-K on the MoE prompt, the 8B
# prompt's profile.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
llama_beside
gpu_selftest; cp $OUT/selftest.md $R/
grep -E "qk_norm_rope_store.*rows=(5|6|7|9) " $R/selftest.md
timeout 60 $Z selftest --backend vulkan --vk-split-k false > $OUT/st.md 2>&1
echo "selftest, split-K off: rc=$? $(tail -1 $OUT/st.md)"; grep -i fail $OUT/st.md | head -3
if grep -q FAIL $R/selftest.md && ! grep -q FAIL $OUT/st.md; then
  export VS_ZINC="--zinc-arg=--vk-split-k --zinc-arg=false"; echo "side-by-side without split-K"
fi
while pgrep -f "preset qwen3-8b" > /dev/null; do sleep 1; done
ab "--vk-split-k true" "--vk-split-k false" -m /tmp/q8b.gguf -p 512 -n 0 -r 2
ab "--vk-prep-rows true" "--vk-prep-rows false" -m /tmp/q8b.gguf -p 512 -n 0 -r 2
llama_wait
# The side-by-side's two tests of 512-token prompts and generation (the one after 4,096 tokens
# left out: the device time was short), then split-K on the MoE prompt.
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 ${VS_ZINC:-}"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 2 --bandwidth-gbs $bw --out $R/cuda-d0
wait_synth
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $R/cuda-moe
ab "--vk-split-k true" "--vk-split-k false" -m /tmp/moe.gguf -p 512 -n 0 -r 2
