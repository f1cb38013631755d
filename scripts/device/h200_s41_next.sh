#!/bin/bash
# Prepared in session 40 for a later call (carry .gl and .dev): the device idles ~45 µs between
# tokens at the session-40 defaults (H100; ~23 of them on the host, ~18 recording the first
# piece of 8 commands), 1.6% of a Qwen3-30B-A3B step — whose 1.2× target is ~1% short (median
# 1.186× llama.cpp CUDA). A smaller first piece (4 or 2 commands) starts the device sooner;
# adaptive pieces then send the next as soon as the device is idle. Alternating on the three
# decode tests, then the kernels' clock of a MoE token at the defaults (where its step goes now).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth
wait_synth
decode_alt "--vk-chunks 4x512" "--vk-chunks 2x512"
clocked moe -m /tmp/moe.gguf -p 0 -n 16 -r 1
echo "[${SECONDS}s] done"
