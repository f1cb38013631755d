# Sourced by the device scripts: the Vulkan loader from the debs in .gl/ (libvulkan1 and the
# libglvnd packages the NVIDIA driver's ICD loads through: libglvnd0 libegl1 libgl1 libglx0
# libgles2 libopengl0; with libvulkan1 alone no device is found), the NVIDIA ICD, Z (the zinc
# binary: $ZINC, default .dev/zinc), `synth` (the Qwen3-8B and Qwen3-30B-A3B files at /tmp/q8b.gguf
# and /tmp/moe.gguf, in the background: `wait_synth` for them, which a llama.cpp build running
# beside does not hold up as `wait` would), `ab A B TEST…` (a test with options A, then B, twice)
# and `tps BINARY ARGS…` (one `zinc bench`
# on Vulkan, its tok/s with the host's waiting share, the device's span, idle µs between tokens
# and dependent stages, on one line), `gpu_selftest` (`zinc selftest` on Vulkan: its last line
# and any failure), `decode_ab [OPTIONS…]` (the three decode tests — Qwen3-8B tg128, tg64 after
# 4,096 tokens, Qwen3-30B-A3B tg128 — each twice, alternating with $ZINC_OLD where set, then once
# with the options given), and for llama.cpp (LLAMA_SRC: its source, see
# prepare_here.sh; carried as .lsrc/llama-src.tar.xz, or a build as .lbin/, below) `build_llama [JOBS]` (its CUDA llama-bench in $LCU, niced, logs and
# time in $OUT; one already built there is reused) and `vs_llama` (the three side-by-sides through scripts/bench_vs_llama.py).
# At most 8 files come back from $OUT (the device README's limits), and session 44 saw which:
# the first by name. `clocked` writes two a run and `vs_llama` two a test, so a log teed to
# $OUT/log.txt after them was lost: tee the log to $OUT/0log.txt, which sorts first.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig >/dev/null 2>&1
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# The zinc binary may travel xz-compressed (.dev/zinc.xz, ~3 MB where the stripped binary is
# ~14): so that it and a carried llama.cpp build (.lbin/, ~42 MB) fit the 64 MiB a call carries.
[ -e .dev/zinc.xz ] && [ ! -e .dev/zinc ] && xz -dc .dev/zinc.xz > .dev/zinc && chmod +x .dev/zinc
Z=${ZINC:-.dev/zinc}
synth() {
  $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
  $Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
}
tps() {
  local b=$1; shift
  echo "== $b $*: $(timeout 90 $b bench --backend vulkan "$@" 2>&1 | grep -E '^\| qwen|host waited|spanned|stages|recorded a step' \
    | tr '\n' ' ' | sed 's/zinc bench://g' | awk -F'|' '{print $1 $(NF-1) $NF}')"
}
gpu_selftest() {
  timeout 100 $Z selftest --backend vulkan > $OUT/selftest.md 2>&1
  echo "selftest rc=$? $(tail -1 $OUT/selftest.md)"; grep -i fail $OUT/selftest.md | head -5
}
decode_ab() {
  for M in "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096" \
    "-m /tmp/moe.gguf -p 0 -n 128 -r 2"; do
    for i in 1 2; do tps $Z $M; [ -n "${ZINC_OLD:-}" ] && tps $ZINC_OLD $M; done
    [ $# -gt 0 ] && tps $Z $M "$@"
  done
}
# `decode_alt "OPTS" …`: the three decode tests (Qwen3-30B-A3B tg128, Qwen3-8B tg128, tg64
# after 4,096 tokens), each twice, the defaults and each OPTS in turn (session 40's loops).
decode_alt() {
  for M in "-m /tmp/moe.gguf -p 0 -n 128 -r 2" "-m /tmp/q8b.gguf -p 0 -n 128 -r 2" \
    "-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"; do
    for i in 1 2; do
      tps $Z $M
      for o in "$@"; do tps $Z $M $o; done
    done
  done
}
# LCU: where llama.cpp is unpacked and built (default /tmp/lcu; a folder inside the checkout
# that git ignores outlives the call while the machine stays warm, so a later call can reuse it).
LCU=${LCU:-/tmp/lcu}
LB=$LCU/build/bin/llama-bench
# Waits for `synth`'s two files (its background jobs, not others such as a llama.cpp build).
wait_synth() {
  while pgrep -f "synth --preset" > /dev/null; do sleep 2; done
  ls -la /tmp/q8b.gguf /tmp/moe.gguf
}
# `clocked NAME TEST…`: one `zinc bench` with the kernels' clock (`--vk-clock`), its report in
# $OUT/clock-NAME.md and its stages in $OUT/clock-NAME.json; the report's lines printed.
clocked() {
  local name=$1; shift
  timeout 150 $Z bench --backend vulkan "$@" --vk-clock --clock-out $OUT/clock-$name.json \
    > $OUT/clock-$name.md 2>&1
  echo "== clocked $name ($*): rc=$?"; grep -E "^(\||Where)" $OUT/clock-$name.md | head -14
}
# `ab A B TEST…`: the test twice with options A, twice with B, alternating (quote each side).
ab() {
  local a=$1 b=$2; shift 2
  for i in 1 2; do tps $Z "$@" $a; tps $Z "$@" $b; done
}
# `build_llama 14` in the background, its output in $OUT/llama-build.txt, and `llama_wait` for it
# (printing that output) before `vs_llama`.
llama_beside() {
  (build_llama 14 > $OUT/llama-build.txt 2>&1; touch $OUT/llama-done) &
}
llama_wait() {
  while [ ! -e $OUT/llama-done ]; do sleep 3; done
  cat $OUT/llama-build.txt
}
build_llama() {
  # A build carried in .lbin/ (llama-bin.txz.*: build/bin packed by an earlier call, commit
  # 0c1e570 for sm_90) is unpacked instead of built — at /tmp/lcu only, where its binaries'
  # RUNPATH finds their libraries.
  # One made off the device (build_llama_cuda_here.sh) links the device's libcublas.so.13 and
  # libcudart.so.13, looked for below where the loader does not find them.
  if [ ! -x $LB ] && [ "$LCU" = /tmp/lcu ] && ls .lbin/llama-bin.txz.* > /dev/null 2>&1; then
    mkdir -p $LCU && cat .lbin/llama-bin.txz.* | xz -d | tar -C $LCU -xf -
  fi
  if [ -x $LB ] && ldd $LB | grep -q "libcublas.*not found"; then
    local d=$(dirname "$(find /usr /opt -name 'libcublas.so.13*' 2>/dev/null | head -1)")
    export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "llama.cpp: cuBLAS from $d"
  fi
  [ -x $LB ] && { echo "llama.cpp CUDA build: reused ($LB)" | tee $OUT/build-time.txt; return; }
  local src=${LLAMA_SRC:-.lsrc/llama-src.tar.xz}
  [ -e $src ] || src=.dev/llama-src.tar.xz
  mkdir -p $LCU && [ -d $LCU/llama.cpp ] || tar -xJf $src -C $LCU
  local start=$(date +%s)
  nice -n 10 cmake -S $LCU/llama.cpp -B $LCU/build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release > $OUT/cmake.log 2>&1
  nice -n 10 cmake --build $LCU/build --target llama-bench -j ${1:-16} > $OUT/build.log 2>&1
  echo "llama.cpp CUDA build: $(( $(date +%s) - start )) s" | tee $OUT/build-time.txt
}
# `vs_llama`'s ZINC runs take $VS_ZINC (extra `bench_vs_llama.py` arguments such as
# `--zinc-arg=--vk-norm-in-glu --zinc-arg=true`; default none).
vs_llama() {
  # The roofline's bandwidth: 3,350 GB/s on an H100 SXM, else the H200's 4,300 measured earlier.
  local bw=4300
  nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
  local B="python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 ${VS_ZINC:-}"
  echo "== Qwen3-8B: prompt 512, generation 128"
  $B -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs $bw --out $OUT/cuda-d0
  echo "== Qwen3-8B: generation 128 after 4096 tokens"
  $B -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs $bw --out $OUT/cuda-d4096
  echo "== Qwen3-30B-A3B: prompt 512, generation 128"
  $B -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $OUT/cuda-moe
}
# Waits for `synth`'s Qwen3-8B file alone.
wait_8b() {
  while pgrep -f "preset qwen3-8b" > /dev/null; do sleep 2; done
}
# `tsj ARGS…`: one `zinc bench` on Vulkan, its first test's tok/s (0 where it failed).
tsj() {
  timeout 90 $Z bench --backend vulkan "$@" -o json 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["avg_ts"])' 2>/dev/null || echo 0
}
# `pick OPT MODEL`: MODEL pp512 with `OPT true`, then `OPT false` (session 35's alternating runs
# agreed within 0.1%); OPT is added to WIN where it is more than 1% ahead.
pick() {
  local o=$1 m=$2 a1 b1 r
  a1=$(tsj -m $m -p 512 -n 0 -r 3 $o true); b1=$(tsj -m $m -p 512 -n 0 -r 3 $o false)
  r=$(python3 -c "print(f'{$a1/max($b1,1e-9):.4f}')")
  echo "== $o on $m pp512: on $a1, off $b1 (ratio $r)"
  python3 -c "import sys; sys.exit(0 if $r > 1.01 else 1)" && WIN="$WIN $o true"
}
# `lts TEST…`: llama.cpp CUDA's llama-bench (-fa 1) on TEST, its tok/s (0 where it failed).
lts() {
  timeout 90 $LB -ngl 99 -fa 1 -o json "$@" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])' 2>/dev/null || echo 0
}
# `pairs N NAME TEST…`: ZINC (`tsj`) and llama.cpp (`lts`) in turn on TEST, N rounds: each
# round's ratio, then their median.
pairs() {
  local n=$1 name=$2; shift 2
  local rs="" i z l r
  for i in $(seq $n); do
    z=$(tsj "$@"); l=$(lts "$@")
    r=$(python3 -c "print(f'{$z/max($l,1e-9):.4f}')"); rs="$rs $r"
    echo "$name round $i: ZINC $z, llama.cpp $l, ratio $r"
  done
  echo "$name median ratio: $(python3 -c "import statistics,sys; print(statistics.median(map(float,sys.argv[1:])))" $rs)"
}
