#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_buffer_reference_uvec2 : require
// attn_dec.comp — split-K attention for decode steps, with the query heads that share a KV head
// together: each slice of keys is read once for all of them, as 16-byte vectors by neighbouring
// invocations. Buffers and partials as attn_split.comp (pass 2 is attn_combine.comp, or the merge
// below); push constants as listed in the block.
//
// Specialization constants: 0 = HD, the head dimension; 1 = G, query heads a workgroup (≤ 8,
//   dividing `group`, the query heads per KV head: a workgroup's heads share their KV head);
//   2 = LPK, invocations per key in the score pass (a power of two ≤ the subgroup size, with
//   HD / LPK a multiple of 8); 3 = MERGE (below); 4 = WG (below); 5 = UX: bits 0–3 U, keys an
//   invocation loads at once (2, 4 or 8), bits 8–15 ABL (timing only, below).
// Workgroup: WG invocations (specialization constant 4: 128 or 256, which the host picks by
//   the plan, see backend.rs's attn_dec_plan). Dispatch: (n_head / G, rows, nsplit) workgroups: x = w, query heads
//   w·G .. w·G + G − 1 (KV head w·G / group), y = row t, z = slice s of split_len keys (≤ 1024:
//   shared memory holds the slice's G × split_len scores).
// Direct (push `direct`, one slice: nsplit = 1): no partials — the workgroup writes its heads'
// outputs itself (acc / l, what attn_combine.comp makes of a single slice) and, with a mode,
// quantizes them for the out-projection (G·HD a multiple of the block).
// Scores: LPK invocations share a key, each dotting HD / LPK dimensions with every query head,
// summed by subgroup shuffles; an invocation loads U keys' vectors before it multiplies, so a
// slice's reads are in flight together. Softmax of the slice per head (a subgroup per head):
// m = its largest score, weights e^(s − m), l = their sum. Values the same way round: invocation
// (key slot, part) sums its keys' 8-dimension vectors times the weights for all G heads, and the
// key slots are summed (shuffles within a subgroup, then subgroups in order through `red`). Partials [m, l, acc] per (row, head, slice). With MERGE, the
// last workgroup of a (row, group of G heads) to finish (a counter, device-scope atomics) merges them
// as attn_combine.comp does — one dispatch for the whole attention — and may quantize the
// result for the out-projection (quant8.glsl; G·HD a multiple of the block).
// attn_dec_one, attn_dec_prep_one (this file compiled with ONE_PASS, and with PREP_ON too): the
// keys and values in one pass, a running softmax a key slot (see ONE_PASS in main), for heads of
// HD = 8·LPK only (an invocation's 8 dimensions), which the host checks; the same partials and
// output as the two passes, rounded in another order.
// attn_dec_rows, attn_dec_prep_rows (this file compiled with KROWS, and with PREP_ON too; split
// slices of G of a KV head's query heads, `VulkanOptions::attn_rows`; HD = 8·LPK with LPK ≥ 4,
// which the host checks): each key read once for the workgroup's heads, by invocations that hold
// whole pieces of it rather than a slice of every key. Scores: TPK = LPK / 4 neighbouring
// invocations share a key, each taking 4 of its 16-byte pieces (32 dimensions) and dotting them
// with every head's query; KU keys an invocation (the define's value: 2 or 4, the variant the host
// picks by `VulkanOptions::attn_rows_keys`; U is unused here), so a pass of the workgroup takes RK = (WG / TPK)·KU keys, their loads issued before
// the math; the partial dots meet by log2(TPK) shuffles. Softmax as the two passes'. Values:
// invocation (slot, part_lane) takes piece part_lane of 4·KU keys (the same RK keys a pass), the
// first pass's loads issued before the softmax; the slots meet as in the other forms
// (attn_slots.glsl). The same partials and output as the two passes, the scores' sums rounded in
// another order. (Loading the first pass's keys before the prep measured no faster on the H100.)
// attn_dec_prep (this file compiled with PREP_ON; a decode step of one row): qk_prep.comp's work
// done here — `q` holds the raw queries, and every workgroup normalizes and rotates its own G
// heads; where its slice holds the row's own position, it also makes the KV head's new key and
// value from the raw ones (`kraw`, `vraw`) and takes them from shared memory, and the first
// workgroup of the KV head stores them in the cache (no other workgroup of the dispatch reads
// that position from the cache: one stage fewer a layer). `prm` holds, as u32 words: 0–1 the
// query norm's weights' address, 2–3 the key norm's (HD values each), 4 n_rot, 5 neox,
// 6 freq_base, 7 freq_scale, 8 eps (f32 bits), 9 flags (bit 0: norm the queries, bit 1: the
// keys, bit 2: scale the queries after RoPE, as elementwise.comp's scale does), 10 that scale
// (f32 bits) — qk_prep.comp's push constants of the same names, and Gemma 3's pre-scale; with
// one slice (`direct`), 11 an epoch and 12–13 a sync.glsl slot's address (0: none) that the
// dispatch's last workgroup signals once every output is stored (early weights); with flags
// bit 3, from word 14 RoPE's cos and sin of each pair i < n_rot / 2 at the row's position, as
// the host computed them (the CPU backend's values: no angle stepped, no sin or cos here).

#include "common.glsl"

layout(constant_id = 0) const uint HD = 128;
layout(constant_id = 1) const uint G = 4;
layout(constant_id = 2) const uint LPK = 16;
// 3 = MERGE: 1 where this dispatch merges: only then do partials go through coherent stores,
// which cost long contexts' many slices on NVIDIA.
layout(constant_id = 3) const uint MERGE = 0;
layout(constant_id = 4) const uint WG = 128;
layout(local_size_x_id = 4) in;

// Partials go through coherent references: the workgroup that merges them reads what others
// wrote in the same dispatch.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CFloats { float v[]; };

layout(push_constant, std430) uniform PC {
    Floats q;
    Words kc;
    Words vc;
    Floats o;
    Words pos;
    Floats part;
    Words qout;   // merge: o quantized (quant8.glsl), when mode > 0
    Floats sout;
    Words count;  // merge: a counter per (row, workgroup column w), zero between dispatches
    Floats kraw;  // attn_dec_prep: the row's raw keys (n_head_kv · HD)
    Floats vraw;  // attn_dec_prep: its raw values
    Words prm;    // attn_dec_prep: the rest of qk_prep.comp's parameters (above)
    uint n_head;
    uint n_head_kv;
    float scale;
    uint window;
    uint split_len;
    uint mode;    // merge or direct: 0 f32 only, else the activation mode of o's quantization
    uint group;   // query heads per KV head
    uint direct;  // 1: one slice, the output written here (see above)
} pc;

#include "quant8.glsl"
#ifdef PREP_ON
#define DFLOAT_SHUFFLE 1
#include "dfloat.glsl"
#include "rope.glsl"
#include "sync.glsl"
#endif

const float NEG_BIG = -3.0e38; // the empty-slice sentinel; keeps exp() arguments finite
const uint SL_MAX = 1024u;
const uint DPL = HD / LPK; // dimensions per invocation in the score pass
const uint KPP = WG / LPK; // keys per pass
// 5 = UX: bits 0–3 U, keys an invocation loads at once (2, 4 or 8; H200: 4 ahead of 2 and 8);
// bits 8–15 ABL, timing only (the results are wrong): parts of the work left out to see what
// each costs — 1 the q/k norms, 2 RoPE, 4 the scores (keys unread), 8 the values (unread), 16
// the output's quantization (the scores left out, the softmax reads zeros).
layout(constant_id = 5) const uint UX = 4;
const uint U = UX & 15u;
const uint ABL = (UX >> 8) & 255u;
#ifdef KROWS
// KROWS's keys an invocation a pass: the define's value (2 or 4), so that the arrays of loads
// and the loops over them have literal sizes.
const uint KU = KROWS;
const uint TPK = LPK / 4u;       // invocations a key in the score pass (4 pieces each)
const uint RK = (WG / TPK) * KU; // keys a pass, in both the score and the value pass
const uint VS = WG / LPK;        // value slots (4·KU keys each a pass)
#endif

shared float qs[G * HD];
shared float ps[G * SL_MAX];
shared float red[G * LPK * 8u]; // values: the slots' sums, head by head
shared float ml[3u * 8u]; // per head: m, l, then (from 16) 1 / l for the output
shared uint is_last;
const uint MERGE_MAX = 8u; // the most slices the host lets a dispatch merge (MERGE_SPLITS)
// (wexp is declared in every variant: at MERGE_MAX 16 the H100's driver compiled attn_dec_prep to
// 58 registers instead of 47, and after 4,096 tokens Qwen3-8B ran 7% slower.)
shared float wexp[8u * MERGE_MAX]; // merge: per head and slice, e^(m_s − M)
#ifdef PREP_ON
#include "attn_prep.glsl"
#endif

// Softmax of the slice's n scores in ps, a subgroup per head: m = its largest score, the
// weights e^(s − m) in the scores' place, l = their sum; m, l and 1 / l into ml. Every invocation
// calls it (no barrier inside: the caller's come before and after).
void slice_softmax(uint n, uint tid) {
    uint sg = tid / gl_SubgroupSize;
    uint nsg = WG / gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    for (uint gi = sg; gi < G; gi += nsg) {
        float m = NEG_BIG;
        for (uint i = lane; i < n; i += gl_SubgroupSize) {
            m = max(m, ps[gi * SL_MAX + i]);
        }
        m = subgroupMax(m);
        float l = 0.0;
        for (uint i = lane; i < n; i += gl_SubgroupSize) {
            float w = exp(ps[gi * SL_MAX + i] - m);
            ps[gi * SL_MAX + i] = w;
            l += w;
        }
        l = subgroupAdd(l);
        if (lane == 0u) {
            ml[2u * gi] = m;
            ml[2u * gi + 1u] = l;
            // One slice: the output is acc / l (l > 0: the slice holds at least the query's
            // own position), read after the caller's barriers.
            ml[16u + gi] = l > 0.0 ? 1.0 / l : 0.0;
        }
    }
}

#ifdef KROWS
// KROWS's score loads into wk: pieces r + TPK·i (i < 4) of keys j0 + kslot + (WG / TPK)·u
// (u < KU) of KV head kvh, zeros from `end` on. (Macros: they read main's locals.)
#define ROWS_KEYS(j0, end)                                                                  \
    [[unroll]] for (uint u = 0u; u < KU; u++) {                                              \
        uint j = (j0) + kslot + u * (WG / TPK);                                             \
        [[unroll]] for (uint i = 0u; i < 4u; i++) {                                         \
            uint at = (j * kv_dim + kvh * HD) / 8u + r + TPK * i;                           \
            wk[4u * u + i] = j < (end) ? Quads(pc.kc).v[at] : uvec4(0u);                    \
        }                                                                                   \
    }
// KROWS's value loads into wv: piece part_lane of the slice's keys i0 + slot + VS·v (v < 4·KU,
// counted from `begin`), zeros from the n-th.
#define ROWS_VALUES(i0)                                                                     \
    [[unroll]] for (uint v = 0u; v < 4u * KU; v++) {                                         \
        uint i = (i0) + slot + VS * v;                                                      \
        wv[v] = i < n ? Quads(pc.vc).v[((begin + i) * kv_dim + kvh * HD) / 8u + part_lane]  \
                      : uvec4(0u);                                                          \
    }
#endif

// The output of the workgroup's G heads of row t: qs[i] (head i / HD's unnormalized sums)
// times ml[16 + head] (its 1 / L), written to o and, with a mode, quantized by the whole
// workgroup (every invocation calls it; G·HD a multiple of the block).
void write_output(uint t, uint h0, uint tid) {
    uint span = G * HD;
    uint ooff = (t * pc.n_head + h0) * HD;
    for (uint j0 = 0u; j0 < span; j0 += 4u * WG) {
        uint e = j0 + 4u * tid;
        bool live = e < span;
        vec4 v = vec4(0.0);
        if (live) {
            [[unroll]] for (uint k = 0u; k < 4u; k++) {
                v[k] = qs[e + k] * ml[16u + (e + k) / HD];
                pc.o.v[ooff + e + k] = v[k];
            }
        }
        if (pc.mode != 0u && (ABL & 16u) == 0u) {
            quant_word(tid, v, ooff + e, live, pc.mode, pc.qout, pc.sout); // uniform branch
        }
    }
}

void main() {
    uint w = gl_WorkGroupID.x;
    uint t = gl_WorkGroupID.y;
    uint sp = gl_WorkGroupID.z;
    uint nsplit = gl_NumWorkGroups.z;
    uint tid = gl_LocalInvocationID.x;
    uint kv_dim = pc.n_head_kv * HD;
    uint h0 = w * G;
    uint kvh = h0 / pc.group; // the KV head of all G
    uint qbase = (t * pc.n_head + h0) * HD; // the G heads are consecutive

    uint p = pc.pos.v[t];
    uint lo = (pc.window > 0u && p + 1u > pc.window) ? p + 1u - pc.window : 0u;
    uint begin = lo + sp * pc.split_len;
    uint end = min(p + 1u, lo + (sp + 1u) * pc.split_len); // keys [begin, end)
#ifdef PREP_ON
    // The slice index of the row's own key, where this slice holds it (else past the slice).
    bool has_new = begin <= p && p < end;
    prep(t, h0, kvh, p, has_new, has_new && h0 % pc.group == 0u, tid);
    uint inew = has_new ? p - begin : 0xFFFFFFFFu;
#else
    for (uint i = tid; i < G * HD; i += WG) {
        qs[i] = pc.q.v[qbase + i];
    }
    barrier();
#endif

#if defined(KROWS)
    // Scores, RK keys a pass: each invocation's KU keys' partial dots over its 4 pieces, for
    // every head, then summed across the key's TPK invocations.
    uint n = end > begin ? end - begin : 0u;
    uint r = tid % TPK;
    uint kslot = tid / TPK;
    uvec4 wk[4u * KU];
    for (uint j0 = begin; j0 < end; j0 += RK) {
        ROWS_KEYS(j0, end);
#ifdef PREP_ON
        // The row's own key from shared memory (its place in the cache may not be written yet).
        [[unroll]] for (uint u = 0u; u < KU; u++) {
            if (j0 + kslot + u * (WG / TPK) - begin == inew) {
                [[unroll]] for (uint i = 0u; i < 4u; i++) {
                    uint e0 = 4u * (r + TPK * i);
                    wk[4u * u + i] = uvec4(kn[e0], kn[e0 + 1u], kn[e0 + 2u], kn[e0 + 3u]);
                }
            }
        }
#endif
        // Vector arithmetic, every loop nest short (on the H100 a scalar loop over each piece's
        // 8 halves measured slower: 4 heads at 2 keys an invocation, ~201 against ~237 tok/s
        // after 4,096 tokens).
        float s[KU][8];
        [[unroll]] for (uint u = 0u; u < KU; u++) {
            [[unroll]] for (uint gi = 0u; gi < G; gi++) {
                s[u][gi] = 0.0;
            }
        }
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            vec4 ka[KU], kb[KU];
            [[unroll]] for (uint u = 0u; u < KU; u++) {
                uvec4 w = wk[4u * u + i];
                ka[u] = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
                kb[u] = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
            }
            uint d0 = 8u * (r + TPK * i);
            [[unroll]] for (uint gi = 0u; gi < G; gi++) {
                uint qb = gi * HD + d0;
                vec4 qa = vec4(qs[qb], qs[qb + 1u], qs[qb + 2u], qs[qb + 3u]);
                vec4 qc = vec4(qs[qb + 4u], qs[qb + 5u], qs[qb + 6u], qs[qb + 7u]);
                [[unroll]] for (uint u = 0u; u < KU; u++) {
                    s[u][gi] += dot(qa, ka[u]) + dot(qc, kb[u]);
                }
            }
        }
        [[unroll]] for (uint u = 0u; u < KU; u++) {
            uint j = j0 + kslot + u * (WG / TPK);
            [[unroll]] for (uint gi = 0u; gi < G; gi++) {
                float v = s[u][gi];
                [[unroll]] for (uint st = TPK / 2u; st > 0u; st >>= 1) {
                    v += subgroupShuffleXor(v, st);
                }
                if (j < end && r == 0u) {
                    ps[gi * SL_MAX + (j - begin)] = pc.scale * v;
                }
            }
        }
    }
    CLK_MARK(4); // the scores made (the last pass's, this invocation's)
    // The first pass's values, issued before the softmax.
    uint part_lane = tid % LPK;
    uint slot = tid / LPK;
    uvec4 wv[4u * KU];
    ROWS_VALUES(0u);
    barrier();
    uint sg = tid / gl_SubgroupSize;
    uint nsg = WG / gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    slice_softmax(n, tid);
    barrier();
    CLK_MARK(5); // the softmax
    // Values: each invocation's 4·KU keys a pass, times every head's weight.
#ifdef PREP_ON
    uvec4 vn4 = uvec4(vn[4u * part_lane], vn[4u * part_lane + 1u], vn[4u * part_lane + 2u],
                      vn[4u * part_lane + 3u]);
#endif
    vec4 acc4[8][2];
    [[unroll]] for (uint gi = 0u; gi < G; gi++) {
        acc4[gi][0] = vec4(0.0);
        acc4[gi][1] = vec4(0.0);
    }
    for (uint i0 = 0u; i0 < n; i0 += RK) {
        if (i0 != 0u) {
            ROWS_VALUES(i0);
        }
        [[unroll]] for (uint v = 0u; v < 4u * KU; v++) {
            uint i = i0 + slot + VS * v;
            if (i < n) {
#ifdef PREP_ON
                uvec4 x = i == inew ? vn4 : wv[v];
#else
                uvec4 x = wv[v];
#endif
                vec4 va = vec4(unpackHalf2x16(x.x), unpackHalf2x16(x.y));
                vec4 vb = vec4(unpackHalf2x16(x.z), unpackHalf2x16(x.w));
                [[unroll]] for (uint gi = 0u; gi < G; gi++) {
                    float p = ps[gi * SL_MAX + i];
                    acc4[gi][0] += p * va;
                    acc4[gi][1] += p * vb;
                }
            }
        }
    }
    // attn_slots.glsl's form of the sums: 8 dimensions a head.
    float acc[8][8];
    [[unroll]] for (uint gi = 0u; gi < G; gi++) {
        [[unroll]] for (uint e = 0u; e < 4u; e++) {
            acc[gi][e] = acc4[gi][0][e];
            acc[gi][4u + e] = acc4[gi][1][e];
        }
    }
    CLK_MARK(2); // the slice's keys and values taken
    uint sg_slots = max(gl_SubgroupSize / LPK, 1u);
    bool sg_first = (lane / LPK) == 0u;
    uint c = 0u;
    #include "attn_slots.glsl"
#elif !defined(ONE_PASS)
    // Scores: each invocation reads U keys' vectors before it multiplies, so a slice's loads
    // are in flight together.
    Quads k4 = Quads(pc.kc);
    uint part_lane = tid % LPK;
    uint slot = tid / LPK;
    if ((ABL & 4u) != 0u) { // timing only: no scores, zeros in their place
        for (uint i = tid; i < G * SL_MAX; i += WG) {
            ps[i] = 0.0;
        }
    }
    for (uint j0 = begin; j0 < end && (ABL & 4u) == 0u; j0 += KPP * U) {
        float s[U][8];
        [[unroll]] for (uint u = 0u; u < U; u++) {
            [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
                s[u][gi] = 0.0;
            }
        }
        for (uint c = 0u; c < DPL / 8u; c++) {
            uint d0 = part_lane * DPL + 8u * c;
#ifdef PREP_ON
            uint e0 = d0 / 2u;
            uvec4 kn4 = uvec4(kn[e0], kn[e0 + 1u], kn[e0 + 2u], kn[e0 + 3u]);
#endif
            uvec4 w[U];
            [[unroll]] for (uint u = 0u; u < U; u++) {
                uint j = j0 + slot + u * KPP;
                // Dimensions d0 .. d0 + 7 of key j: one vector of 8 halves.
                w[u] = j < end ? k4.v[(j * kv_dim + kvh * HD + d0) / 8u] : uvec4(0u);
#ifdef PREP_ON
                // The row's own key from shared memory (its place in the cache may not be
                // written yet: the load above is issued with the others, its value unused).
                w[u] = j - begin == inew ? kn4 : w[u];
#endif
            }
            [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
                if (gi < G) {
                    float qv[8];
                    [[unroll]] for (uint e = 0u; e < 8u; e++) {
                        qv[e] = qs[gi * HD + d0 + e];
                    }
                    [[unroll]] for (uint u = 0u; u < U; u++) {
                        [[unroll]] for (uint e = 0u; e < 4u; e++) {
                            vec2 kk = unpackHalf2x16(w[u][e]);
                            s[u][gi] += qv[2u * e] * kk.x + qv[2u * e + 1u] * kk.y;
                        }
                    }
                }
            }
        }
        [[unroll]] for (uint u = 0u; u < U; u++) {
            uint j = j0 + slot + u * KPP;
            [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
                if (gi < G) {
                    float v = s[u][gi];
                    for (uint st = LPK / 2u; st > 0u; st >>= 1) {
                        v += subgroupShuffleXor(v, st);
                    }
                    if (j < end && part_lane == 0u) {
                        ps[gi * SL_MAX + (j - begin)] = pc.scale * v;
                    }
                }
            }
        }
    }
    barrier();
    CLK_MARK(2); // the slice's scores

    uint n = end > begin ? end - begin : 0u;
    uint sg = tid / gl_SubgroupSize;
    uint nsg = WG / gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    slice_softmax(n, tid);
    barrier();

    // Values, as the keys: invocation (slot, part_lane) sums its keys' 8-dimension vectors for
    // every head, U keys' loads at a time; then the slots are summed, first across a subgroup
    // (shuffles), then across subgroups in order (red), and the sums stored.
    Quads v4 = Quads(pc.vc);
    uint sg_slots = max(gl_SubgroupSize / LPK, 1u); // slots of one subgroup
    bool sg_first = (lane / LPK) == 0u;
    for (uint c = 0u; c < DPL / 8u; c++) {
        uint d0 = part_lane * DPL + 8u * c;
#ifdef PREP_ON
        uint e0 = d0 / 2u;
        uvec4 vn4 = uvec4(vn[e0], vn[e0 + 1u], vn[e0 + 2u], vn[e0 + 3u]);
#endif
        float acc[8][8];
        [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                acc[gi][e] = 0.0;
            }
        }
        for (uint i0 = slot; i0 < n && (ABL & 8u) == 0u; i0 += KPP * U) {
            uvec4 w[U];
            [[unroll]] for (uint u = 0u; u < U; u++) {
                uint i = i0 + u * KPP;
                w[u] = i < n ? v4.v[((begin + i) * kv_dim + kvh * HD + d0) / 8u] : uvec4(0u);
#ifdef PREP_ON
                w[u] = i == inew ? vn4 : w[u];
#endif
            }
            [[unroll]] for (uint u = 0u; u < U; u++) {
                uint i = i0 + u * KPP;
                if (i < n) {
                    float vv[8];
                    [[unroll]] for (uint e = 0u; e < 4u; e++) {
                        vec2 h = unpackHalf2x16(w[u][e]);
                        vv[2u * e] = h.x;
                        vv[2u * e + 1u] = h.y;
                    }
                    [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
                        if (gi < G) {
                            float p = ps[gi * SL_MAX + i];
                            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                                acc[gi][e] += p * vv[e];
                            }
                        }
                    }
                }
            }
        }
        #include "attn_slots.glsl"
    }
#else
    // ONE_PASS (attn_dec_one, attn_dec_prep_one; DPL = 8, which the host checks): keys and
    // values in one pass. Each key slot keeps a running softmax for each head — its largest
    // score m, the sum l of e^(s − m) and its 8 dimensions of Σ e^(s − m)·v — so a key's value
    // is loaded with the key, and a slice takes one trip to memory for each U·KPP keys where
    // the two passes take two. Then the slots meet: each head's m is the slots' largest, l the
    // slots' l rescaled to it and added in slot order, and the value sums rescaled likewise and
    // added as the two-pass form adds its slots'. The partials and the output are the two-pass
    // form's (the same softmax, rounded in another order).
    Quads k4 = Quads(pc.kc);
    Quads v4 = Quads(pc.vc);
    uint part_lane = tid % LPK;
    uint slot = tid / LPK;
    uint d0 = part_lane * 8u;
#ifdef PREP_ON
    uint e0 = d0 / 2u;
    uvec4 kn4 = uvec4(kn[e0], kn[e0 + 1u], kn[e0 + 2u], kn[e0 + 3u]);
    uvec4 vn4 = uvec4(vn[e0], vn[e0 + 1u], vn[e0 + 2u], vn[e0 + 3u]);
#endif
    float mh[8], lh[8], acc[8][8];
    [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
        mh[gi] = NEG_BIG;
        lh[gi] = 0.0;
        [[unroll]] for (uint e = 0u; e < 8u; e++) {
            acc[gi][e] = 0.0;
        }
    }
    for (uint j0 = begin; j0 < end; j0 += KPP * U) {
        // Dimensions d0 .. d0 + 7 of U keys and of their values, every load issued before the
        // math.
        uvec4 wk[U], wv[U];
        [[unroll]] for (uint u = 0u; u < U; u++) {
            uint j = j0 + slot + u * KPP;
            uint at = (j * kv_dim + kvh * HD + d0) / 8u;
            wk[u] = j < end ? k4.v[at] : uvec4(0u);
            wv[u] = j < end ? v4.v[at] : uvec4(0u);
#ifdef PREP_ON
            // The row's own key and value from shared memory (as in the two-pass form).
            wk[u] = j - begin == inew ? kn4 : wk[u];
            wv[u] = j - begin == inew ? vn4 : wv[u];
#endif
        }
        [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
            if (gi < G) {
                float qv[8];
                [[unroll]] for (uint e = 0u; e < 8u; e++) {
                    qv[e] = qs[gi * HD + d0 + e];
                }
                float sc[U];
                float mx = mh[gi];
                [[unroll]] for (uint u = 0u; u < U; u++) {
                    float v = 0.0;
                    [[unroll]] for (uint e = 0u; e < 4u; e++) {
                        vec2 kk = unpackHalf2x16(wk[u][e]);
                        v += qv[2u * e] * kk.x + qv[2u * e + 1u] * kk.y;
                    }
                    for (uint st = LPK / 2u; st > 0u; st >>= 1) {
                        v += subgroupShuffleXor(v, st);
                    }
                    sc[u] = pc.scale * v;
                    mx = j0 + slot + u * KPP < end ? max(mx, sc[u]) : mx;
                }
                // Rescaled to the new largest score (a factor 1 while none was seen: the sums
                // are still 0).
                float corr = exp(mh[gi] - mx);
                lh[gi] *= corr;
                [[unroll]] for (uint e = 0u; e < 8u; e++) {
                    acc[gi][e] *= corr;
                }
                [[unroll]] for (uint u = 0u; u < U; u++) {
                    float w = j0 + slot + u * KPP < end ? exp(sc[u] - mx) : 0.0;
                    lh[gi] += w;
                    [[unroll]] for (uint e = 0u; e < 4u; e++) {
                        vec2 h = unpackHalf2x16(wv[u][e]);
                        acc[gi][2u * e] += w * h.x;
                        acc[gi][2u * e + 1u] += w * h.y;
                    }
                }
                mh[gi] = mx;
            }
        }
    }
    CLK_MARK(2); // the slice's keys and values taken
    uint n = end > begin ? end - begin : 0u;
    uint sg = tid / gl_SubgroupSize;
    uint nsg = WG / gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    // Each slot's m and l (its first lane's) into ps; then every invocation takes each head's
    // largest m, M, and L = Σ l·e^(m − M) in slot order, and rescales its sums to M.
    if (part_lane == 0u) {
        [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
            if (gi < G) {
                ps[2u * (gi * KPP + slot)] = mh[gi];
                ps[2u * (gi * KPP + slot) + 1u] = lh[gi];
            }
        }
    }
    barrier();
    [[unroll]] for (uint gi = 0u; gi < 8u; gi++) {
        if (gi < G) {
            float big = NEG_BIG;
            for (uint k = 0u; k < KPP; k++) {
                big = max(big, ps[2u * (gi * KPP + k)]);
            }
            float l = 0.0;
            for (uint k = 0u; k < KPP; k++) {
                l += ps[2u * (gi * KPP + k) + 1u] * exp(ps[2u * (gi * KPP + k)] - big);
            }
            float corr = exp(mh[gi] - big);
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                acc[gi][e] *= corr;
            }
            if (tid == 0u) {
                ml[2u * gi] = big;
                ml[2u * gi + 1u] = l;
                ml[16u + gi] = l > 0.0 ? 1.0 / l : 0.0;
            }
        }
    }
    // The slots' value sums (attn_slots.glsl, as the two-pass form adds them; one pass of
    // dimensions: DPL = 8).
    uint sg_slots = max(gl_SubgroupSize / LPK, 1u);
    bool sg_first = (lane / LPK) == 0u;
    uint c = 0u;
    #include "attn_slots.glsl"
#endif
    CLK_MARK(3); // the slots met
    if (pc.direct == 1u) {
        // One slice: the output is acc / l (ml[16 + head], stored with the softmax).
        write_output(t, h0, tid);
#ifdef PREP_ON
        // Early weights: the out-projection, recorded beside this dispatch, waits for it.
        uvec2 sync = uvec2(pc.prm.v[12], pc.prm.v[13]);
        if (sync != uvec2(0u)) { // uniform
            uint n = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;
            sync_signal(Words(sync), pc.prm.v[11], n, tid);
        }
#endif
        return;
    }
    if (tid < G) {
        uint out_base = ((t * pc.n_head + h0 + tid) * nsplit + sp) * (HD + 2u);
        float m0 = n > 0u ? ml[2u * tid] : NEG_BIG;
        float l0 = n > 0u ? ml[2u * tid + 1u] : 0.0;
        if (MERGE == 1u) {
            CFloats(pc.part).v[out_base] = m0;
            CFloats(pc.part).v[out_base + 1u] = l0;
        } else {
            pc.part.v[out_base] = m0;
            pc.part.v[out_base + 1u] = l0;
        }
    }
    if (MERGE == 0u) {
        return;
    }

    // The last of the nsplit workgroups of (row t, heads w·G ..) merges the slices of its G heads
    // (attn_combine.comp's arithmetic, with each slice's weight computed once) and, with a mode, quantizes the merged G·HD values.
    memoryBarrierBuffer(); // this workgroup's partials are visible before it is counted
    barrier();
    if (tid == 0u) {
        uint done = atomicAdd(pc.count.v[t * gl_NumWorkGroups.x + w], 1u);
        is_last = done == nsplit - 1u ? 1u : 0u;
    }
    barrier();
    if (is_last == 0u) {
        return; // uniform over the workgroup
    }
    memoryBarrierBuffer(); // and the others' are seen
    CFloats pv = CFloats(pc.part);
    uint stride = HD + 2u;
    // Each head's largest m, then every slice's weight e^(m_s − M) once (not per value), then
    // 1 / L summed in slice order.
    if (tid < G) {
        uint base = (t * pc.n_head + h0 + tid) * nsplit * stride;
        float mx = -3.0e38;
        for (uint s = 0u; s < nsplit; s++) {
            mx = max(mx, pv.v[base + s * stride]);
        }
        ml[2u * tid] = mx;
    }
    barrier();
    for (uint i = tid; i < G * nsplit; i += WG) {
        uint gi = i / nsplit, s = i % nsplit;
        uint base = (t * pc.n_head + h0 + gi) * nsplit * stride;
        wexp[gi * MERGE_MAX + s] = exp(pv.v[base + s * stride] - ml[2u * gi]);
    }
    barrier();
    if (tid < G) {
        uint base = (t * pc.n_head + h0 + tid) * nsplit * stride;
        float lsum = 0.0;
        for (uint s = 0u; s < nsplit; s++) {
            lsum += pv.v[base + s * stride + 1u] * wexp[tid * MERGE_MAX + s];
        }
        ml[16u + tid] = (lsum > 0.0) ? 1.0 / lsum : 0.0;
    }
    // Each value's slices weighted and summed, into qs (the queries are long read).
    for (uint i = tid; i < G * HD; i += WG) {
        uint hh = i / HD;
        uint base = (t * pc.n_head + h0 + hh) * nsplit * stride;
        float a = 0.0;
        for (uint s = 0u; s < nsplit; s++) {
            a += pv.v[base + s * stride + 2u + i % HD] * wexp[hh * MERGE_MAX + s];
        }
        qs[i] = a;
    }
    barrier();
    write_output(t, h0, tid);
    if (tid == 0u) {
        pc.count.v[t * gl_NumWorkGroups.x + w] = 0u; // ready for the next dispatch
    }
}
