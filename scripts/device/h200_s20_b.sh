#!/bin/bash
# Session 20, second call: the pre-norms deferred into the residual mat-vecs (`--vk-fuse-norm
# true`, two stages fewer a layer now that the gate/up quantizing their own rows apply the
# norm's scale themselves) against the defaults on both files; the experts' lanes around the
# new gate/up shape (one row a group, workgroups of 32 × the lanes); the short-context
# attention's workgroups of 256 after 4,096 tokens.
. scripts/device/common.sh
synth
wait_synth
for f in q8b moe; do
  M="-m /tmp/$f.gguf -p 0 -n 128 -r 2"
  for i in 1 2; do tps $Z $M; tps $Z $M --vk-fuse-norm true; done
done
M="-m /tmp/moe.gguf -p 0 -n 128 -r 2"
tps $Z $M --vk-moe-lanes 8x8; tps $Z $M --vk-moe-lanes 32x8
D="-m /tmp/q8b.gguf -p 0 -n 64 -r 1 -d 4096"
tps $Z $D; tps $Z $D --vk-attn-wg 256; tps $Z $D --vk-fuse-norm true
