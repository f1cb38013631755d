#!/bin/bash
# Session 15's last call: llama.cpp's CUDA build (0c1e570) in the background and the GPU's
# clocks logged every 100 ms throughout (clocks.csv, phases marked in phases.txt); meanwhile
# `zinc selftest` and the decode tests alternating two builds — ZINC_OLD (.dev/zinc-prev, the
# first call's) against .dev/zinc (matvec_dec's weights and input read-only and restrict) — and
# on the MoE the experts' mat-vecs at two rows a group (--vk-moe-rows 2) and every K-quant
# mat-vec at two (--vk-decode-kquant 32x2x128); last the side-by-side, each test on the build
# and variant that measured best in this call. Needs .dev/zinc, .dev/zinc-prev,
# .dev/llama-src.tar.xz and .gl.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu \
  --format=csv -lms 100 > $OUT/clocks.csv 2>&1 &
CLK=$!
nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active --format=csv -lms 500 > $OUT/reasons.csv 2>&1 &
RSN=$!
phase() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $OUT/phases.txt; }
synth
build_llama 12 > /dev/null &
BUILD=$!
while [ ! -s /tmp/q8b.gguf ] || pgrep -f "zinc synth" >/dev/null; do sleep 2; done
gpu_selftest
ZO=.dev/zinc-prev
# One run: LABEL BINARY, then zinc bench's arguments; keeps "LABEL tok/s stages idle-µs".
ab() {
  local label=$1 bin=$2; shift 2
  phase "start $label"
  local v=$(timeout 120 $bin bench --backend vulkan "$@" -o json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][-1]
print("%.1f %s %s" % (r["avg_ts"], r.get("stages_per_step", "-"), r.get("idle_us_per_token", "-")))')
  phase "end $label"
  echo "$label ${v:-failed}" | tee -a $OUT/ab.txt
}
for i in 1 2; do
  for b in O N; do
    [ $b = O ] && bin=$ZO || bin=$Z
    ab "8b-$b" $bin -m /tmp/q8b.gguf -p 0 -n 128 -r 2
    ab "8b4k-$b" $bin -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
    ab "moe-$b" $bin -m /tmp/moe.gguf -p 0 -n 128 -r 2
  done
  ab "moe-NR" $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 --vk-moe-rows 2
  ab "moe-NW" $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 --vk-decode-kquant 32x2x128
  ab "moe-OW" $ZO -m /tmp/moe.gguf -p 0 -n 128 -r 2 --vk-decode-kquant 32x2x128
done
# The best of a test's variants (by the mean of its runs): "BINARY ARGS" for bench_vs_llama.py.
best() {
  python3 - "$1" "$OUT/ab.txt" "$Z" "$ZO" <<'EOF'
import sys, collections
t, runs = sys.argv[1], collections.defaultdict(list)
for line in open(sys.argv[2]):
    label, v = line.split()[:2]
    if label.startswith(t + "-") and v != "failed":
        runs[label[len(t) + 1:]].append(float(v))
z, zo = sys.argv[3], sys.argv[4]
how = {"O": (zo, ""), "N": (z, ""), "NR": (z, "--vk-moe-rows 2"),
       "NW": (z, "--vk-decode-kquant 32x2x128"), "OW": (zo, "--vk-decode-kquant 32x2x128")}
b = max(runs, key=lambda k: sum(runs[k]) / len(runs[k])) if runs else "N"
print(how[b][0], " ".join("--zinc-arg=" + a for a in how[b][1].split()))
EOF
}
wait $BUILD; cat $OUT/build-time.txt
grep -q "Built target llama-bench" $OUT/build.log && rm -f $OUT/build.log $OUT/cmake.log
side() { # NAME TEST, then bench_vs_llama.py's arguments
  local name=$1 sel=$(best $2); shift 2
  local bin=${sel%% *} extra=${sel#* }
  echo "== $name ($bin $extra)"
  phase "start side $name"
  python3 scripts/bench_vs_llama.py --zinc $bin --llama-bench $LB --llama-arg=-fa --llama-arg=1 $extra "$@"
  phase "end side $name"
}
side "Qwen3-8B: prompt 512, generation 128" 8b -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs 4300 --out $OUT/cuda-d0
side "Qwen3-8B: generation 128 after 4096 tokens" 8b4k -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs 4300 --out $OUT/cuda-d4096
side "Qwen3-30B-A3B: prompt 512, generation 128" moe -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
# Each engine's generation alone, for the clocks.
phase "start llama tg 8b"; $LB -m /tmp/q8b.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 2 > /dev/null 2>&1; phase "end llama tg 8b"
phase "start llama tg moe"; $LB -m /tmp/moe.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 2 > /dev/null 2>&1; phase "end llama tg moe"
kill $CLK $RSN 2>/dev/null
# Clocks during each phase: the median SM and memory clock and power of its samples.
python3 - $OUT/clocks.csv $OUT/phases.txt <<'EOF' | tee $OUT/clocks-by-phase.txt
import sys, csv, datetime, statistics
rows = []
for r in csv.reader(open(sys.argv[1])):
    try:
        t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
        rows.append((t, r[1].strip(), float(r[2].split()[0]), float(r[3].split()[0]), float(r[4].split()[0]), float(r[5].split()[0])))
    except (ValueError, IndexError):
        pass
starts = {}
for line in open(sys.argv[2]):
    d, tm, what, *name = line.split()
    t = datetime.datetime.strptime(d + " " + tm, "%Y/%m/%d %H:%M:%S.%f")
    name = " ".join(name)
    if what == "start":
        starts[name] = t
    elif name in starts:
        s = [r for r in rows if starts[name] <= r[0] <= t]
        if s:
            print("%-40s n=%3d sm %6.0f MHz mem %5.0f MHz power %5.0f W pstates %s util %3.0f%%" % (
                name, len(s), statistics.median(x[2] for x in s), statistics.median(x[3] for x in s),
                statistics.median(x[4] for x in s), sorted(set(x[1] for x in s)), statistics.median(x[5] for x in s)))
EOF
