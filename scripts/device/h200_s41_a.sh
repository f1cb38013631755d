#!/bin/bash
# Session 41, one call for everything (carry .gl, .dev, .lbin; device time was short): the host's
# own part of a decode step's recording (`--vk-skip record`: nothing reaches the driver) for the
# build before (.dev/zinc-old.xz: session 40's HEAD with that option only) and this one (a fast
# hasher for the per-command maps, pipelines looked up by the name's address, push constants
# built in place: lavapipe's dry 0.6B step 162 -> ~80 µs); the three decode tests alternating
# between the two builds (MoE and 8B tg128 first, after 4,096 tokens last); the side-by-side with
# llama.cpp CUDA at the defaults; three MoE pairs alternating with llama-bench. In order of
# need: a call cut short still returns its log.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
[ -e .dev/zinc-old ] || { xz -dc .dev/zinc-old.xz > .dev/zinc-old; chmod +x .dev/zinc-old; }
synth
build_llama > /dev/null
wait_synth > /dev/null
echo "[${SECONDS}s] files ready"
for M in "-m /tmp/moe.gguf" "-m /tmp/q8b.gguf"; do
  for b in .dev/zinc-old $Z; do tps $b $M -p 0 -n 32 -r 1 --vk-skip record; done
done
for M in "-m /tmp/moe.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 128 -r 2"; do
  for i in 1 2; do tps $Z $M; tps .dev/zinc-old $M; done
done
echo "[${SECONDS}s] A/B done"
vs_llama
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
echo "[${SECONDS}s] side-by-side done"
pairs 3 "Qwen3-30B-A3B tg128" -m /tmp/moe.gguf -p 0 -n 128 -r 2
M="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do tps $Z $M; tps .dev/zinc-old $M; done
echo "[${SECONDS}s] done"
