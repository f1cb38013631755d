#!/bin/bash
# ZINC against an earlier build (ZINC_OLD), alternating, on the three decode tests, after `zinc
# selftest` on the GPU, each test then once more with EXTRA's options (session 13: EXTRA='--vk-
# norm-wg 64' at 854df7e, EXTRA='--vk-attn-ahead 8' at 651a2a2). Needs $OUT, ZINC, ZINC_OLD and
# .gl/ (common.sh). About 5 minutes.
. scripts/device/common.sh
synth
gpu_selftest
wait
decode_ab ${EXTRA:-}
