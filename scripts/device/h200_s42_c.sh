#!/bin/bash
# Session 42, for the next (carry .gl, .dev; ~3 min): where a Qwen3-8B token's time goes now by
# the kernels' clock, from an empty context and after 4,096 tokens (the 1.5× targets left:
# 1.31× and 1.19×), the tables and the stage records in $OUT.
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1
echo "[${SECONDS}s] file ready"
clocked 8b-d0 -m /tmp/q8b.gguf -p 0 -n 16 -r 1
clocked 8b-d4096 -m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096
echo "[${SECONDS}s] done"
