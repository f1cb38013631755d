#!/bin/bash
# Session 18, first GPU call (one build, options alternating): the selftest; Qwen3-30B-A3B
# tg128 at the defaults (logits read in place), copying them into a vector as before
# (`--copy-logits`), and with the router's ranking left out (`--vk-router-stop 1`) or its
# ranking and counter (`2`; timing only, wrong picks); Qwen3-8B tg128 with and without the copy;
# a profile of each (the logits' copy to the host now an entry of its own).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
synth
wait_synth
gpu_selftest
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --copy-logits; tps $Z $M --vk-router-stop 1; tps $Z $M --vk-router-stop 2
done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M --copy-logits; done
timeout 90 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-moe.txt 2>&1
timeout 90 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --profile > $OUT/prof-8b.txt 2>&1
grep -E "copy|host|router|total" $OUT/prof-moe.txt | head -20
