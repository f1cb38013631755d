#!/bin/bash
# Session 33: llama.cpp's CUDA build beside (packed into $OUT as llama-bin.txz.* so a later
# call carries it in .dev/ instead of building it again); the selftest; where the MoE router's
# routing tail goes (`--vk-router-stop`: 0 all, 4 ranked then fixed experts, 5 the logits read
# through plain loads instead of coherent ones, 6 ranked without reading them, 7 also without the acquiring barrier; each clocked and
# timed); the next-norm fused into the residual mat-vecs (`--vk-fuse-norm true`) again on this
# card; then the side-by-side with llama.cpp as the time allows.
. scripts/device/common.sh
T0=$(date +%s)
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest; cp $OUT/selftest.md $R/
wait_synth; el
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
Q="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for s in 0 4 5 6 7; do
  clocked moe-stop$s -m /tmp/moe.gguf -p 0 -n 16 -r 1 --vk-router-stop $s
done
grep -h -A3 -i "router" $OUT/clock-moe-stop*.md | grep -i -E "mark|ranked|counted" | head -12
cat $OUT/clock-moe-stop*.md > $R/clock-moe.md
el
for i in 1 2; do
  for s in 0 5 4 7; do tps $Z $M --vk-router-stop $s; done
  tps $Z $M --vk-fuse-norm true
  tps $Z $Q
  tps $Z $Q --vk-fuse-norm true
done
el
llama_wait
tail -2 $OUT/build.log
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe; el
tar -C $LCU -cf - build/bin | xz -T16 -6 | split -b 15M - $R/llama-bin.txz.
ls -la $R; el
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d0; el
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d4096; el
