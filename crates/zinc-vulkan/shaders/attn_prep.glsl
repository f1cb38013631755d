// attn_prep.glsl — a decode step's q/k preparation inside an attention kernel (qk_prep.comp's
// work: the query heads and the new key normed and rotated, the new key and value stored in the
// cache), included under PREP_ON by attn_dec.comp and by attn_dec_cm.comp.
// In scope: HD, G, WG, ABL (timing only: 1 leaves the norms out, 2 RoPE), CLK_MARK, shared
// float qs[G * HD] (the queries land there), and a push-constant block `pc` with q, kc, vc,
// kraw, vraw, prm, n_head and n_head_kv as attn_dec.comp's (prm's words listed there);
// dfloat.glsl (with DFLOAT_SHUFFLE) and rope.glsl included before it.

shared float kf[HD];     // PREP: the row's new key, normed and rotated
shared float nws[2u * HD]; // PREP: the query norm's weights, then the key norm's
shared uint kn[HD / 2u]; // PREP: the new key as the cache stores it (f16 pairs)
shared uint vn[HD / 2u]; // PREP: the new value likewise
// HSC_LEN: an includer may pad hsc so that the arrays after it stay 16-byte aligned (9 in
// attn_dec.comp, whose compiled kernels were measured with it).
#ifndef HSC_LEN
#define HSC_LEN 9
#endif
shared float hsc[HSC_LEN]; // PREP: each head's norm scale (the G ≤ 8 queries, then the key)
shared vec2 rcs[HD / 2u]; // PREP with the host's table: each pair's cos and sin

// PREP: the queries of row t's G heads h0 .. into qs, normed (the scale a double-float sum of
// squares, as rms.glsl's; then (x · scale) · w) and rotated (rope.glsl), as qk_prep.comp makes
// them; where `has_new`, the KV head's new key likewise into kf and kn, and its value into vn,
// both rounded to f16 as the cache holds them, and stored in the cache where `writer`. Every
// invocation calls it (it holds barriers); the queries are ready after its last barrier.
void prep(uint t, uint h0, uint kvh, uint p, bool has_new, bool writer, uint tid) {
    Words prm = pc.prm;
    Floats kraw = pc.kraw;
    Floats vraw = pc.vraw;
    Floats qw = Floats(uvec2(prm.v[0], prm.v[1]));
    Floats kw = Floats(uvec2(prm.v[2], prm.v[3]));
    uint n_rot = prm.v[4];
    bool neox = prm.v[5] != 0u;
    float freq_base = uintBitsToFloat(prm.v[6]);
    float freq_scale = uintBitsToFloat(prm.v[7]);
    float eps = uintBitsToFloat(prm.v[8]);
    bool qnorm = (prm.v[9] & 1u) != 0u;
    bool knorm = (prm.v[9] & 2u) != 0u;
    bool qscale = (prm.v[9] & 4u) != 0u;
    bool table = (prm.v[9] & 8u) != 0u;
    float qs_scale = uintBitsToFloat(prm.v[10]);
    uint kv_dim = pc.n_head_kv * HD;
    uint qbase = (t * pc.n_head + h0) * HD;
    uint kbase = t * kv_dim + kvh * HD;
    uint dst = (p * kv_dim + kvh * HD) / 2u; // the position's half pairs in the caches
    // Every load first: the raw queries, the norms' weights, RoPE's table, the raw key and
    // value.
    for (uint i = tid; i < G * HD; i += WG) {
        qs[i] = pc.q.v[qbase + i];
    }
    for (uint i = tid; i < HD; i += WG) {
        nws[i] = qnorm ? qw.v[i] : 1.0;
        nws[HD + i] = knorm ? kw.v[i] : 1.0;
    }
    if (table) { // uniform
        for (uint i = tid; i < n_rot / 2u; i += WG) {
            rcs[i] = uintBitsToFloat(uvec2(prm.v[14u + 2u * i], prm.v[15u + 2u * i]));
        }
    }
    if (has_new) { // uniform over the workgroup
        for (uint i = tid; i < HD; i += WG) {
            kf[i] = kraw.v[kbase + i];
        }
        for (uint i = tid; i < HD / 2u; i += WG) {
            uint h = packHalf2x16(vec2(vraw.v[kbase + 2u * i], vraw.v[kbase + 2u * i + 1u]));
            vn[i] = h;
            if (writer) {
                pc.vc.v[dst + i] = h;
            }
        }
    }
    barrier();
    CLK_MARK(0); // the prep's loads in shared memory
    // Each head's scale, a subgroup a head: its lanes add their values' squares in order, then
    // pair the sums by shuffles.
    uint heads = G + (has_new ? 1u : 0u);
    uint sgs = gl_SubgroupSize;
    uint nsg = WG / sgs;
    uint sg = tid / sgs;
    uint lane = gl_SubgroupInvocationID;
    for (uint hh = sg; hh < heads; hh += nsg) { // uniform over the subgroup
        bool is_k = hh == G;
        if ((is_k ? knorm : qnorm) && (ABL & 1u) == 0u) {
            precise float hi = 0.0;
            precise float lo = 0.0;
            for (uint j = lane; j < HD; j += sgs) {
                add_square(hi, lo, is_k ? kf[j] : qs[hh * HD + j]);
            }
            for (uint st = 1u; st < sgs; st *= 2u) {
                two_sum_pair(hi, lo, st, (lane & st) == 0u);
            }
            if (lane == 0u) {
                hsc[hh] = mean_scale(hi, lo, HD, eps);
            }
        }
    }
    barrier();
    for (uint i = tid; i < heads * HD && (ABL & 1u) == 0u; i += WG) {
        uint hh = i / HD;
        uint j = i % HD;
        if (hh == G) {
            if (knorm) {
                kf[j] = (kf[j] * hsc[hh]) * nws[HD + j];
            }
        } else if (qnorm) {
            qs[i] = (qs[i] * hsc[hh]) * nws[j];
        }
    }
    barrier();
    // RoPE, an invocation a pair (an odd n_rot's last dimension stays as it is).
    uint half_rot = (ABL & 2u) == 0u ? n_rot / 2u : 0u;
    for (uint i = tid; i < heads * half_rot; i += WG) {
        uint hh = i / half_rot;
        uint pi = i % half_rot;
        uint a = hh * HD + (neox ? pi : 2u * pi);
        uint b = hh * HD + (neox ? pi + half_rot : 2u * pi + 1u);
        vec2 x = hh == G ? vec2(kf[a - G * HD], kf[b - G * HD]) : vec2(qs[a], qs[b]);
        vec2 r = table ? rope_rotate(x, rcs[pi])
                       : rope_pair(x, p, pi, n_rot, freq_base, freq_scale);
        if (hh == G) {
            kf[a - G * HD] = r.x;
            kf[b - G * HD] = r.y;
        } else {
            qs[a] = r.x;
            qs[b] = r.y;
        }
    }
    barrier();
    if (qscale) {
        for (uint i = tid; i < G * HD; i += WG) {
            precise float y = qs[i] * qs_scale;
            qs[i] = y;
        }
    }
    if (has_new) {
        for (uint i = tid; i < HD / 2u; i += WG) {
            uint h = packHalf2x16(vec2(kf[2u * i], kf[2u * i + 1u]));
            kn[i] = h;
            if (writer) {
                pc.kc.v[dst + i] = h;
            }
        }
    }
    barrier();
    CLK_MARK(1); // the queries and the new key normed and rotated
}
