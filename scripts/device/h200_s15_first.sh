#!/bin/bash
# Session 15's first call: llama.cpp's CUDA build (0c1e570) in the background; meanwhile `zinc
# selftest` at the defaults and with the fused pre-norm, then the three decode tests on one
# build in alternating variants (A: no fused activation, B: the defaults — the gated activation
# in the gate/up mat-vecs' tail —, C: B with the fused pre-norm; for the MoE also B and C at two
# rows a group of lanes for every K-quant), a profile of the MoE at B, and last the
# side-by-side, each file at the variant that measured best in this call.
# Needs .dev/zinc, .dev/llama-src.tar.xz and .gl.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
build_llama 12 > /dev/null &
BUILD=$!
while [ ! -s /tmp/q8b.gguf ] || pgrep -f "zinc synth" >/dev/null; do sleep 2; done
gpu_selftest
timeout 100 $Z selftest --backend vulkan --vk-fuse-norm true > $OUT/selftest-fn.md 2>&1
echo "selftest --vk-fuse-norm true rc=$? $(tail -1 $OUT/selftest-fn.md)"; grep -i fail $OUT/selftest-fn.md | head -5
# One run: LABEL, then zinc bench's arguments; prints and keeps "LABEL tok/s stages idle-µs".
ab() {
  local label=$1; shift
  local v=$(timeout 120 $Z bench --backend vulkan "$@" -o json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][-1]
print("%.1f %s %s" % (r["avg_ts"], r.get("stages_per_step", "-"), r.get("idle_us_per_token", "-")))')
  echo "$label ${v:-failed}" | tee -a $OUT/ab.txt
}
A="--vk-fuse-glu false"; B=""; C="--vk-fuse-norm true"; W="--vk-decode-kquant 32x2x128"
for i in 1 2; do
  for v in A B C; do ab "8b-$v" -m /tmp/q8b.gguf -p 0 -n 128 -r 2 ${!v}; done
  for v in A B C; do ab "8b4k-$v" -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096 ${!v}; done
  for v in A B C; do ab "moe-$v" -m /tmp/moe.gguf -p 0 -n 128 -r 2 ${!v}; done
  ab "moe-BW" -m /tmp/moe.gguf -p 0 -n 128 -r 2 $W
  ab "moe-CW" -m /tmp/moe.gguf -p 0 -n 128 -r 2 $C $W
done
timeout 100 $Z bench --backend vulkan -m /tmp/moe.gguf -p 0 -n 32 -r 1 --profile > $OUT/profile-moe.md 2>&1
grep -E "^\|" $OUT/profile-moe.md | head -24
# The best variant of a test (by the mean of its runs) as zinc bench arguments.
best() {
  python3 - "$1" "$OUT/ab.txt" <<'EOF'
import sys, collections
t, runs = sys.argv[1], collections.defaultdict(list)
for line in open(sys.argv[2]):
    label, v = line.split()[:2]
    if label.startswith(t + "-") and v != "failed":
        runs[label[len(t) + 1:]].append(float(v))
args = {"A": "--vk-fuse-glu false", "B": "", "C": "--vk-fuse-norm true",
        "BW": "--vk-decode-kquant 32x2x128", "CW": "--vk-fuse-norm true --vk-decode-kquant 32x2x128"}
b = max(runs, key=lambda k: sum(runs[k]) / len(runs[k])) if runs else "B"
print(" ".join("--zinc-arg=" + a for a in args[b].split()))
EOF
}
wait $BUILD; cat $OUT/build-time.txt
grep -q "Built target llama-bench" $OUT/build.log && rm -f $OUT/build.log $OUT/cmake.log
P="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1"
echo "== Qwen3-8B: prompt 512, generation 128 ($(best 8b))"
$P $(best 8b) -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0
echo "== Qwen3-8B: generation 128 after 4096 tokens ($(best 8b4k))"
$P $(best 8b4k) -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 4300 --out $OUT/cuda-d4096
echo "== Qwen3-30B-A3B: prompt 512, generation 128 ($(best moe))"
$P $(best moe) -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
