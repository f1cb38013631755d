#!/bin/bash
# Session 46 (carry .gl, .dev, .lbin; ~8 min, one call): session 45's h200_s45_a.sh and _b.sh
# (never run, removed) in one, in the order of what decides (session 46's device time went on
# failed starts, so one call must tell whether attn_dec_cm.comp's forms, `--vk-attn-cm 1` and
# `2`, are right and faster): each form's GPU selftest of the attention cases and its
# registers; Qwen3-8B tg64 after 4,096 tokens, each form at 16, 32 and 64 slices against the
# one-pass default, twice; Qwen3-30B-A3B the same at 32 and 64 slices with `--vk-attn-rows 2`;
# after 1,024 tokens; both forms' clocks at 32 slices; the whole selftest with each form; last,
# `--vk-combine-ahead` against the plain merge. A llama.cpp build carried in .lbin/
# (build_llama_cuda_here.sh) is tried once at the start. Its log is `0log.txt` (tee it there;
# selftest reports stay in /tmp, failures in the log).
. scripts/device/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth
# Only a carried build: building here would take most of the call.
ls .lbin/llama-bin.txz.* > /dev/null 2>&1 && build_llama && ldd $LB | grep -E "cublas|cudart|not found"
wait_8b
[ -x $LB ] && echo "llama.cpp CUDA (carried build) 8B tg32: $(lts -m /tmp/q8b.gguf -p 0 -n 32 -r 1)"
for f in 1 2; do
  timeout 100 $Z selftest --backend vulkan --vk-attn-cm $f --filter attention > /tmp/selftest-cm$f.md 2>&1
  echo "selftest cm $f (attention) rc=$? $(tail -1 /tmp/selftest-cm$f.md)"
  grep -iE "fail|error" /tmp/selftest-cm$f.md | head -6
  timeout 60 $Z bench --backend vulkan -m /tmp/q8b.gguf -p 0 -n 4 -r 1 -d 512 --vk-attn-cm $f \
    --vk-pipeline-stats 2>&1 | grep -E "attn_dec" | head -3
done
echo "[${SECONDS}s] selftests done"
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
for i in 1 2; do
  for f in 1 2; do
    echo "8B d4096 cm $f: 16 slices $(tsj $D --vk-attn-cm $f)  32 $(tsj $D --vk-attn-cm $f --vk-attn-slices 32)  64 $(tsj $D --vk-attn-cm $f --vk-attn-slices 64)"
  done
  echo "8B d4096 one-pass: $(tsj $D)"
done
echo "[${SECONDS}s] 8B d4096 done"
wait_synth
M="-m /tmp/moe.gguf -p 0 -n 64 -r 1 -d 4096"
echo "MoE d4096: cm1 32 $(tsj $M --vk-attn-cm 1 --vk-attn-slices 32)  cm1 64 $(tsj $M --vk-attn-cm 1 --vk-attn-slices 64)  cm2 32 $(tsj $M --vk-attn-cm 2 --vk-attn-slices 32)  cm2 64 $(tsj $M --vk-attn-cm 2 --vk-attn-slices 64)  one-pass $(tsj $M)  rows2 $(tsj $M --vk-attn-rows 2)"
D1="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 1024"
echo "8B d1024: cm1 $(tsj $D1 --vk-attn-cm 1 --vk-attn-slices 32)  cm2 $(tsj $D1 --vk-attn-cm 2 --vk-attn-slices 32)  one-pass $(tsj $D1)"
echo "[${SECONDS}s] MoE, d1024 done"
C="-m /tmp/q8b.gguf -p 0 -n 8 -r 1 -d 4096"
clocked cm1 $C --vk-attn-cm 1 --vk-attn-slices 32
clocked cm2 $C --vk-attn-cm 2 --vk-attn-slices 32
for f in 1 2; do
  timeout 120 $Z selftest --backend vulkan --vk-attn-cm $f > /tmp/selftest-cm$f-all.md 2>&1
  echo "selftest cm $f (all) rc=$? $(tail -1 /tmp/selftest-cm$f-all.md)"
  grep -iE "fail|error" /tmp/selftest-cm$f-all.md | head -4
done
echo "[${SECONDS}s] full selftests done"
for i in 1 2; do echo "8B d4096: combine ahead $(tsj $D --vk-combine-ahead true)  plain $(tsj $D)"; done
echo "MoE d4096: combine ahead $(tsj $M --vk-combine-ahead true)  plain $(tsj $M)"
echo "[${SECONDS}s] done"
