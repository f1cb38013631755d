#!/bin/bash
# Session 38's last call (carry .gl, .dev and .lbin: llama.cpp's CUDA build packed by the first
# call, commit 0c1e570 for sm_90): at the new prompt defaults (`mm_beside`, `prep_rows`,
# `act_quant_sg`, `glu_round`, `norm_round` on; split-K, `mm_add` and `moe_skip` removed),
# the default selftest, then common.sh's three side-by-sides with llama.cpp's CUDA build.
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth
build_llama > $R/llama.txt 2>&1
gpu_selftest; cp $OUT/selftest.md $R/
wait_synth
echo "[${SECONDS}s]"
(OUT=$R; vs_llama)
echo "[${SECONDS}s]"
