#!/bin/bash
# A later call (carry .gl, .dev and .lbin): llama.cpp's CUDA build carried in
# .lbin/llama-bin.txz.* (packed by h200_s33_d.sh's call, commit 0c1e570, sm_90) instead of
# built again; the side-by-side for the
# three tests first, then the A/B of $EXTRA (ZINC options, alternating with the defaults;
# default: route.glsl's lean ranking, `--vk-route-lean true`, also clocked against the
# shipped ranking, the routing tail's marks 3 → 4).
. scripts/device/common.sh
T0=$(date +%s)
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
build_llama; ls -la $LB
synth
wait_synth; el
$LB --list-devices 2>&1 | tail -3
B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 ${VS_ZINC:-}"
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
echo "== Qwen3-30B-A3B: prompt 512, generation 128"
$B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe; el
echo "== Qwen3-8B: prompt 512, generation 128"
$B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs $bw --out $OUT/cuda-d0; el
echo "== Qwen3-8B: generation 128 after 4096 tokens"
$B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d4096; el
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
gpu_selftest; cp $OUT/selftest.md $R/; el
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
EXTRA=${EXTRA:---vk-route-lean true}
clocked moe-shipped -m /tmp/moe.gguf -p 0 -n 16 -r 1
clocked moe-extra -m /tmp/moe.gguf -p 0 -n 16 -r 1 $EXTRA
cat $OUT/clock-moe-*.md > $R/clock-moe.md
if [ -n "${EXTRA:-}" ]; then
  for i in 1 2; do tps $Z $M; tps $Z $M $EXTRA; done; el
fi
