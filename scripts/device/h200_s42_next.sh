#!/bin/bash
# Prepared in session 41 for a later call (carry .gl, .dev, .lbin; ~6 min): session 41's build
# (the host's own part of a recording halved; speed unchanged in A/B) never met llama.cpp in a
# side-by-side. Here: the side-by-side at the defaults, five Qwen3-30B-A3B tg128 pairs
# alternating with llama-bench (the 1.2× target, ~1% short at session 40's median 1.186×), and
# the 8B's first piece of 16 against 8 (+0.6% in session 41, won and lost before).
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama > /dev/null
wait_synth > /dev/null
echo "[${SECONDS}s] files ready"
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
echo "[${SECONDS}s] side-by-side done"
pairs 5 "Qwen3-30B-A3B tg128" -m /tmp/moe.gguf -p 0 -n 128 -r 2
for i in 1 2 3; do
  for o in "" "--vk-chunks 16x512"; do tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2 $o; done
done
echo "[${SECONDS}s] done"
