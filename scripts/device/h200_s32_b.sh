#!/bin/bash
# Session 32, second call: llama.cpp's CUDA build beside; this session's three decode changes —
# the MoE router's ranking by one subgroup, the router recorded before its norm, q and k in one
# dispatch — each alone off against all on, alternating; the clock; the driver's pipeline
# statistics; RMS_BATCH 16 (.dev/zinc_b) against 8; then the side-by-side with llama.cpp, with
# any change that lost here turned off (VS_ZINC).
. scripts/device/common.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
llama_beside
synth
gpu_selftest
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
Q="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
# `val NAME TEST…`: tps's line, its tok/s appended to $OUT/val-NAME.
val() {
  local name=$1; shift
  local line; line=$(tps "$@"); echo "$line"
  echo "$line" | awk '{print $(NF-2)}' >> $OUT/val-$name
}
for i in 1 2; do
  val moe-on $Z $M
  val moe-sub $Z $M --vk-route-subgroup false
  val moe-first $Z $M --vk-router-first false
  val moe-two $Z $M --vk-decode-two false
  val moe-none $Z $M --vk-route-subgroup false --vk-router-first false --vk-decode-two false
  val q-on $Z $Q
  val q-two $Z $Q --vk-decode-two false
done
avg() { awk '{s+=$1} END {printf "%.2f", s/NR}' $OUT/val-$1; }
for v in moe-on moe-sub moe-first moe-two moe-none q-on q-two; do echo "$v: $(avg $v)"; done
# A change whose "off" beat "on" (by 0.2%) is off in the side-by-side.
lost() { awk -v a=$(avg $1) -v b=$(avg $2) 'BEGIN {exit !(b > a * 1.002)}'; }
VS_ZINC=""
lost moe-on moe-sub && VS_ZINC="$VS_ZINC --zinc-arg=--vk-route-subgroup --zinc-arg=false"
lost moe-on moe-first && VS_ZINC="$VS_ZINC --zinc-arg=--vk-router-first --zinc-arg=false"
lost q-on q-two && lost moe-on moe-two && VS_ZINC="$VS_ZINC --zinc-arg=--vk-decode-two --zinc-arg=false"
echo "side-by-side ZINC options: ${VS_ZINC:-defaults}"
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
clocked q8b -m /tmp/q8b.gguf -p 0 -n 16 -r 1
timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 --vk-pipeline-stats > $OUT/stats.txt 2>&1
grep -i -E "attn_prep|norm_quant|matvec_dec_Q4_K|shared" $OUT/stats.txt | head -12
for i in 1 2; do tps $Z $Q; tps .dev/zinc_b $Q; done
llama_wait
echo "side-by-side from $(( $(date +%s) - T0 )) s into the call"
# common.sh's vs_llama, the MoE first (this session's changes are the MoE's).
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 $VS_ZINC"
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs $bw --out $OUT/cuda-d0
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d4096
