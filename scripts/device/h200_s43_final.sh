#!/bin/bash
# (Run with the option as a switch, `--vk-attn-rows true`: all heads a workgroup, as 8 is now.)
# Session 43, last call (carry .gl, .dev, .lbin; ~6 min): the rows form's variants by the
# driver's counts and tg64 after 4,096 tokens (ZX selects a temporary build variant: a = the
# first pass's keys not loaded before the prep, b = the slots' sums not met (timing only, the
# results are wrong), c = loops over the workgroup's heads bounded by G, abc = all three), then
# the side-by-side with llama.cpp CUDA at the defaults.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama > /dev/null
wait_8b
echo "[${SECONDS}s] 8B ready"
for x in none a b c abc; do
  echo "== $x: $(ZX=$x timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-rows 8 --vk-attn-ahead 2 --vk-pipeline-stats 2>&1 | grep -E "attn_dec" | head -1)"
done
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D
for x in none a b c abc; do ZX=$x tps $Z $D --vk-attn-rows 8 --vk-attn-ahead 2; done
for x in none abc; do ZH=2 ZX=$x tps $Z $D --vk-attn-rows 8 --vk-attn-ahead 2; done
tps $Z $D
echo "[${SECONDS}s] rows done"
wait_synth > /dev/null
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; cp $OUT/$d/*.svg $R/ 2>/dev/null; done
echo "[${SECONDS}s] done"
