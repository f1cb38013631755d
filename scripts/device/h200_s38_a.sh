#!/bin/bash
# Session 38's first call (carry .gl and .dev; llama.cpp is built from .dev/llama-src.tar.xz
# beside the zinc runs, since this checkout is new and holds no packed build). Most wanted
# first, since a call may be cut at its limit:
# 1. the selftest with the eight prompt options not yet run on a GPU ($NEW_OPTS) and the extra
#    selftests (`selftest_extra`);
# 2. each option against itself off on Qwen3-8B pp512 (`--vk-moe-skip` on Qwen3-30B-A3B);
# 3. the side-by-sides with llama.cpp's CUDA build (8B, then MoE) taking the winners (>1%), the
#    winners together against none on each model;
# 4. llama.cpp's build packed into $OUT (llama-bin.txz.*) for a later call to carry as .lbin/,
#    the default selftest, and the side-by-side after 4,096 tokens where time is left.
# Everything but log.txt and the packed build ends in $OUT/results.tar (8 files come back).
. scripts/device/common.sh
R=$OUT; OUT=/tmp/o; mkdir -p $OUT
synth
llama_beside
selftest_new; echo "[selftests from ${SECONDS}s]"
selftest_extra
wait_8b
WIN=""
pick --vk-split-k /tmp/q8b.gguf
pick --vk-mm-beside /tmp/q8b.gguf
pick --vk-prep-rows /tmp/q8b.gguf
pick --vk-act-quant-sg /tmp/q8b.gguf
if [ $add_ok = 1 ]; then
  pick --vk-mm-add /tmp/q8b.gguf; pick --vk-glu-round /tmp/q8b.gguf; pick --vk-norm-round /tmp/q8b.gguf
fi
[ $ok = 1 ] || WIN=""
echo "winners (selftest ok=$ok):$WIN  [${SECONDS}s]"
llama_wait
echo "[llama.cpp ready at ${SECONDS}s]"
vs() { python3 scripts/bench_vs_llama.py --zinc $Z --llama-bench $LB --llama-arg=-fa --llama-arg=1 $(for w in $WIN; do printf -- "--zinc-arg=%s " $w; done) "$@"; }
bw=4300; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && bw=3350
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== Qwen3-8B: prompt 512, generation 128 (with:$WIN)"
vs -m /tmp/q8b.gguf -p 512 -n 128 -r 3 --bandwidth-gbs $bw --out $R/cuda-d0
if [ -n "$WIN" ]; then
  a1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/q8b.gguf -p 512 -n 0 -r 3)
  echo "== 8B pp512, winners together: $a1 against $b1"
fi
wait_synth
pick --vk-moe-skip /tmp/moe.gguf
[ $ok = 1 ] || WIN=""
echo "== Qwen3-30B-A3B: prompt 512, generation 128 (with:$WIN)  [${SECONDS}s]"
vs -m /tmp/moe.gguf -p 512 -n 128 -r 2 --out $R/cuda-moe
if [ -n "$WIN" ]; then
  a1=$(tsj -m /tmp/moe.gguf -p 512 -n 0 -r 3 $WIN); b1=$(tsj -m /tmp/moe.gguf -p 512 -n 0 -r 3)
  echo "== MoE pp512, winners together: $a1 against $b1"
fi
tar -C $LCU -cf - build/bin | xz -T16 -3 | split -b 15M - $R/llama-bin.txz.
gpu_selftest; cp $OUT/selftest.md $R/
echo "[${SECONDS}s]"
if [ $SECONDS -lt 470 ]; then
  echo "== Qwen3-8B: generation 128 after 4096 tokens (with:$WIN)"
  vs -m /tmp/q8b.gguf -d 4096 -n 128 -r 2 --bandwidth-gbs $bw --out $R/cuda-d4096
fi
cd $R && tar cf results.tar --remove-files selftest*.md cuda-* 2>/dev/null; ls -la $R
