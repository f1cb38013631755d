#!/bin/bash
# Session 42 (carry .gl, .dev with zinc.xz and zinc_old.xz; ~3 min): attn_combine.comp loading
# eight slices' partials at a time (one round trip where eight took eight; the same sums in the
# same order) against the build before, alternating: Qwen3-8B tg64 after 4,096 tokens (16
# slices a head; by the kernels' clock the combine took 6.0 µs a layer there), three pairs,
# then once clocked.
. scripts/device/common.sh
[ -e .dev/zinc_old.xz ] && xz -dc .dev/zinc_old.xz > .dev/zinc_old && chmod +x .dev/zinc_old
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
for i in 1 2 3; do
  tps $Z -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
  tps .dev/zinc_old -m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096
done
clocked 8b-d4096-new -m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096 | grep -E 'attn_combine|Where'
echo "[${SECONDS}s] done"
