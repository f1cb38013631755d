#!/bin/bash
# Session 44, second call (warm machine; carry .gl, .dev): the first call's steal section again
# (its log did not come back: too many files under $OUT): the greedy text, Qwen3-8B tg128 at
# 50/75/100% against the default and the build before, and the GPU selftest with the rows form
# at 2 heads (`zinc selftest` takes no --vk-attn-ahead).
. scripts/device/common.sh
[ -e .dev/zinc_old.xz ] && [ ! -e .dev/zinc_old ] && xz -dc .dev/zinc_old.xz > .dev/zinc_old && chmod +x .dev/zinc_old
O=.dev/zinc_old
[ -e /tmp/q8b.gguf ] || { synth; wait_8b; }
for s in "" "--vk-steal 50" "--vk-steal 100"; do
  echo "greedy [$s]: $(timeout 60 $Z run --backend vulkan -m /tmp/q8b.gguf -p 'The quick brown fox' -n 48 --temp 0 $s 2>/dev/null | md5sum)"
done
T="-m /tmp/q8b.gguf -p 0 -n 128 -r 2"
for i in 1 2; do
  for s in "" "--vk-steal 75" "--vk-steal 50" "--vk-steal 100"; do
    echo "tg128 [$s]: $(tsj $T $s)"
  done
  echo "tg128 old: $(ZINC_X=1 timeout 90 $O bench --backend vulkan $T -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["avg_ts"])')"
done
timeout 100 $Z selftest --backend vulkan --vk-attn-rows 2 > /tmp/selftest-rows2.md 2>&1
echo "selftest rows 2 rc=$? $(tail -1 /tmp/selftest-rows2.md)"; grep -i fail /tmp/selftest-rows2.md | head -5
echo "[${SECONDS}s] done"
