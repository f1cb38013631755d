// attn_slots.glsl — attn_dec.comp's last step over a pass of 8 dimensions, included in its
// main() by all its forms (two passes, ONE_PASS and KROWS), so they sum and store alike: each invocation's
// value sums acc[gi][0..7] (dimensions part_lane·DPL + 8c + 0..7 of head gi) are added across
// the key slots, first within a subgroup (shuffles), then across subgroups in subgroup order —
// at once through ps where a single pass of dimensions leaves ps free and it holds every
// subgroup's sums (two barriers), else one subgroup after another into red (a barrier each) —
// and stored: into qs with one slice (`direct`), else into the slice's partials. Every
// invocation runs it (it holds barriers).
// In scope: acc, c, part_lane, sg, nsg, sg_slots, sg_first, tid, t, h0, sp, nsplit.
#ifdef KROWS
// The shuffles' loop outside the unrolled ones (the same sums in the same order). With it inside
// them, the H100's driver gave the rows form at four heads a workgroup 256 bytes of local memory
// an invocation, gone when this file's sums were left out: a loop of run-time length inside the
// unrolled ones indexes acc at run time. (With this order, 2 heads a workgroup and 2 keys an
// invocation measured 0.7% ahead of the one-pass form on the H100 after 4,096 tokens, session
// 44; the other forms keep the order their GPU timings were taken with.)
for (uint st = LPK; st < LPK * sg_slots; st <<= 1) {
    [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
        if (gi < G) {
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                acc[gi][e] += subgroupShuffleXor(acc[gi][e], st);
            }
        }
    }
}
#else
[[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
    if (gi < G) {
        [[unroll]] for (uint e = 0u; e < 8u; e++) {
            for (uint st = LPK; st < LPK * sg_slots; st <<= 1) {
                acc[gi][e] += subgroupShuffleXor(acc[gi][e], st);
            }
        }
    }
}
#endif
// The subgroups' sums, added in subgroup order: where a single pass of dimensions
// leaves the scores read and their space holds every subgroup's sums, each subgroup
// stores its own there and they are added at once (two barriers); else one after
// another into red (a barrier each).
uint span = G * LPK * 8u;
bool at_once = DPL == 8u && nsg * span <= G * SL_MAX; // uniform
if (at_once) {
    barrier(); // ps is read (the scores, or the one-pass slots' m and l)
    if (sg_first) {
        [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
            if (gi < G) {
                [[unroll]] for (uint e = 0u; e < 8u; e++) {
                    ps[sg * span + gi * (LPK * 8u) + part_lane * 8u + e] = acc[gi][e];
                }
            }
        }
    }
    barrier();
    for (uint r = tid; r < span; r += WG) {
        float a = ps[r];
        for (uint k = 1u; k < nsg; k++) {
            a = a + ps[k * span + r];
        }
        red[r] = a;
    }
} else {
    for (uint k = 0u; k < nsg; k++) {
        if (sg == k && sg_first) {
            [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
                if (gi < G) {
                    [[unroll]] for (uint e = 0u; e < 8u; e++) {
                        uint r = gi * (LPK * 8u) + part_lane * 8u + e;
                        red[r] = k == 0u ? acc[gi][e] : red[r] + acc[gi][e];
                    }
                }
            }
        }
        barrier();
    }
}
for (uint r = tid; r < span; r += WG) {
    uint gi = r / (LPK * 8u);
    uint pl = (r / 8u) % LPK;
    uint d = pl * DPL + 8u * c + r % 8u;
    if (pc.direct == 1u) {
        qs[gi * HD + d] = red[r]; // the queries are read; their space holds the sums
        continue;
    }
    uint out_base = ((t * pc.n_head + h0 + gi) * nsplit + sp) * (HD + 2u);
    if (MERGE == 1u) {
        CFloats(pc.part).v[out_base + 2u + d] = red[r];
    } else {
        pc.part.v[out_base + 2u + d] = red[r];
    }
}
barrier();
