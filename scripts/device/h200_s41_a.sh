#!/bin/bash
# Session 41, first call (carry .gl and .dev): the host's own part of a decode step's recording
# (`--vk-skip record`: nothing reaches the driver) for the build before (.dev/zinc-old.xz: HEAD
# with that option only) and this one (a fast hasher for the per-command maps, the push-constant
# builder inlined: -25% of the dry recording on lavapipe), the three decode tests alternating
# between the two, then a smaller first piece on the new build, and a MoE token's clock.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -e .dev/zinc-old ] || { xz -dc .dev/zinc-old.xz > .dev/zinc-old; chmod +x .dev/zinc-old; }
synth
wait_synth
for M in "-m /tmp/moe.gguf" "-m /tmp/q8b.gguf"; do
  for b in .dev/zinc-old $Z; do tps $b $M -p 0 -n 32 -r 1 --vk-skip record; done
done
ZINC_OLD=.dev/zinc-old decode_ab --vk-chunks 4x512
echo "[${SECONDS}s] A/B done"
ab "" "--vk-chunks 2x512" -m /tmp/moe.gguf -p 0 -n 128 -r 2
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
echo "[${SECONDS}s] done"
