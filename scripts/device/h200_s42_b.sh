#!/bin/bash
# Session 42, second change (carry .gl, .dev; ~4 min): the decode MoE router ranking by the
# logits (`--vk-route-by-logit`, off by default: the picks' weights their own softmax, without
# the softmax over all 128 experts — four workgroup barriers fewer in the routing tail). The
# greedy text of the MoE file on and off, then on against off alternating (Qwen3-30B-A3B tg128,
# three pairs), then the 8B once (the host's part of the idle time, as fixed after the first
# call's steps ahead).
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
synth
wait_synth > /dev/null
echo "[${SECONDS}s] files ready"
for a in true false; do
  echo "greedy MoE, by logit $a: $(timeout 90 $Z run --backend vulkan -m /tmp/moe.gguf -p 'The quick brown fox' -n 48 --temp 0 --vk-route-by-logit $a 2>/dev/null | md5sum)"
done
for i in 1 2 3; do for a in true false; do tps $Z -m /tmp/moe.gguf -p 0 -n 128 -r 2 --vk-route-by-logit $a; done; done
tps $Z -m /tmp/q8b.gguf -p 0 -n 128 -r 2
echo "[${SECONDS}s] done"
