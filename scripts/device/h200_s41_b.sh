#!/bin/bash
# Session 41, the short form of h200_s41_a.sh for the device time left (carry .gl and .dev): the
# host's own part of a Qwen3-30B-A3B step's recording (`--vk-skip record`) for the build before
# (.dev/zinc-old.xz) and this one, then MoE tg128 alternating between the two, then Qwen3-8B.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e .dev/zinc-old ] || { xz -dc .dev/zinc-old.xz > .dev/zinc-old; chmod +x .dev/zinc-old; }
synth
wait_synth > /dev/null
echo "[${SECONDS}s] files ready"
for b in .dev/zinc-old $Z; do tps $b -m /tmp/moe.gguf -p 0 -n 32 -r 1 --vk-skip record; done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps .dev/zinc-old $M; done
echo "[${SECONDS}s] MoE done"
for b in .dev/zinc-old $Z; do tps $b -m /tmp/q8b.gguf -p 0 -n 32 -r 1 --vk-skip record; done
M="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do tps $Z $M; tps .dev/zinc-old $M; done
echo "[${SECONDS}s] done"
