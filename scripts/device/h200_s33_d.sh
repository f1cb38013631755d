#!/bin/bash
# Session 33, for a call of under ten minutes: llama.cpp's CUDA
# build beside; the MoE router's routing tail (`--vk-router-stop` 0, 5: plain loads, 7: no
# loads or acquiring barrier; `--vk-router-atomic true`), clocked and timed; the side-by-side
# (MoE first); the selftest last.
. scripts/device/common.sh
T0=$(date +%s)
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
wait_synth; el
for s in 0 5 7; do clocked moe-stop$s -m /tmp/moe.gguf -p 0 -n 16 -r 1 --vk-router-stop $s; done
clocked moe-atomic -m /tmp/moe.gguf -p 0 -n 16 -r 1 --vk-router-atomic true
cat $OUT/clock-moe-*.md > $R/clock-moe.md; el
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  tps $Z $M; tps $Z $M --vk-router-stop 5; tps $Z $M --vk-router-atomic true
  tps $Z $M --vk-router-stop 4; tps $Z $M --vk-router-stop 7
done; el
llama_wait
tail -2 $OUT/build.log; el
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe; el
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d0; el
for d in cuda-moe cuda-d0; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
tar -C $LCU -cf - build/bin | xz -T16 -3 | split -b 15M - $R/llama-bin.txz.
ls -la $R; el
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d4096; el
cp $OUT/cuda-d4096/bench.json $R/cuda-d4096.json 2>/dev/null
gpu_selftest; el
