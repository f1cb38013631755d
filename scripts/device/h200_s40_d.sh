#!/bin/bash
# Session 40, fourth call (carry .gl, .dev, .lbin): ZINC (defaults) and llama.cpp CUDA's
# llama-bench (-fa 1) alternating on Qwen3-30B-A3B tg128, five rounds, then Qwen3-8B tg128,
# three, each run `-r 2`; every pair's ratio and their median (the side-by-side's one pair a
# call moved 1.16–1.20× on the MoE this session).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth
build_llama > /dev/null
wait_synth > /dev/null
lts() {
  timeout 90 $LB -ngl 99 -fa 1 -o json "$@" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])' 2>/dev/null || echo 0
}
pairs() {
  local n=$1 name=$2; shift 2
  local rs=""
  for i in $(seq $n); do
    local z=$(tsj "$@") l=$(lts "$@")
    local r=$(python3 -c "print(f'{$z/max($l,1e-9):.4f}')")
    echo "$name round $i: ZINC $z, llama.cpp $l, ratio $r"; rs="$rs $r"
  done
  echo "$name median ratio: $(python3 -c "import statistics,sys; print(statistics.median(map(float,sys.argv[1:])))" $rs)"
}
pairs 5 "Qwen3-30B-A3B tg128" -m /tmp/moe.gguf -p 0 -n 128 -r 2
pairs 3 "Qwen3-8B tg128" -m /tmp/q8b.gguf -p 0 -n 128 -r 2
echo "[${SECONDS}s] done"
