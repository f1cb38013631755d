#!/bin/bash
# A record of what ran: `--vk-attn-early` (and `--vk-attn-ahead 16`) existed only in that
# call's build, removed after it measured slower (BENCHMARKS, session 23); not runnable now.
# Session 23, first call: the decode attention loading each slice's values with its keys
# (`--vk-attn-early`, new: the whole slice in one pass, up to 16 keys an invocation) against
# the default, from an empty context (one slice written directly) and after 4,096 tokens (16
# slices of 256 keys), with one, two or four query heads a workgroup there (`--vk-attn-heads`,
# four: a slice's keys read once for its KV head's four query heads) and 32 slices of 128; the
# selftest with it on and off; profiles after 4,096 tokens.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
gpu_selftest
cp $OUT/selftest.md $OUT/selftest-default.md
timeout 100 $Z selftest --backend vulkan --vk-attn-early true > $OUT/selftest.md 2>&1
echo "selftest early rc=$? $(tail -1 $OUT/selftest.md)"; grep -i fail $OUT/selftest.md | head -5
wait_synth
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
E="--vk-attn-early true"
for i in 1 2; do
  tps $Z $D; tps $Z $D $E; tps $Z $D $E --vk-attn-heads 4; tps $Z $D $E --vk-attn-heads 2
done
tps $Z $D --vk-attn-heads 4
tps $Z $D $E --vk-attn-heads 4 --vk-attn-slices 32
tps $Z $D $E --vk-attn-slices 32
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do tps $Z $M; tps $Z $M $E; done
done
tps $Z -m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096
tps $Z -m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096 $E --vk-attn-heads 4
for o in "" "$E --vk-attn-heads 4"; do
  echo "== profile after 4096 tokens: $o"
  timeout 90 $Z bench --backend vulkan $D $o --profile 2>&1 | grep -A18 'GPU time per kernel'
done
echo "== what the driver compiled the attention to"
timeout 90 $Z bench --backend vulkan $D $E --vk-attn-heads 4 --vk-pipeline-stats 2>&1 | grep -E 'attn_(dec|prep|combine)' | head
