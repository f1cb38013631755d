#!/bin/bash
# A later call (carry .gl, .dev and .lbin): llama.cpp's CUDA build carried in
# .lbin/llama-bin.txz.* (packed by h200_s33_d.sh's call, commit 0c1e570, sm_90) instead of
# built again; common.sh's three side-by-sides, the selftest, then $EXTRA (ZINC options;
# default route.glsl's lean ranking, `--vk-route-lean true`, removed in session 34) clocked against the defaults
# (the routing tail's marks 3 → 6 → 7 → 4) and timed alternating with them.
. scripts/device/common.sh
T0=$(date +%s)
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
el() { echo "[$(( $(date +%s) - T0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
build_llama; ls -la $LB
synth
wait_synth; el
vs_llama; el
for d in cuda-moe cuda-d0 cuda-d4096; do cp $OUT/$d/bench.json $R/$d.json 2>/dev/null; done
gpu_selftest; cp $OUT/selftest.md $R/; el
EXTRA=${EXTRA:-} # (its session-33 default, --vk-route-lean true, is gone)
clocked moe-shipped -m /tmp/moe.gguf -p 0 -n 16 -r 1
clocked moe-extra -m /tmp/moe.gguf -p 0 -n 16 -r 1 $EXTRA
cat $OUT/clock-moe-*.md > $R/clock-moe.md
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps $Z $M $EXTRA; done; el
# The experts' gate/up at 8 lanes a row (workgroups of 256, not 512) with 2 or 4 passes' loads
# at once: at 16 lanes two passes took 77 registers and two waves; at 8 the workgroups are half.
for X in "--vk-moe-lanes 8x8 --vk-moe-passes 2x1" "--vk-moe-lanes 8x8 --vk-moe-passes 4x1" \
  "--vk-moe-lanes 8x8"; do tps $Z $M $X; done; tps $Z $M; el
# Where the MoE prompt's time goes (its 1.0× stage has no margin): per-kernel profile.
timeout 120 $Z bench --backend vulkan -m /tmp/moe.gguf -p 512 -n 0 -r 1 --profile > $R/profile-moe-pp512.md 2>&1
echo "profile rc=$?"; grep -E "^\|" $R/profile-moe-pp512.md | head -30; el
