#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_buffer_reference_uvec2 : require
// attn_dec_cm.comp — split-K attention for a decode step on cooperative matrices
// (VK_KHR_cooperative_matrix, 16×16×16 f16 → f32, subgroups of 32): a workgroup takes one
// slice of keys for all G query heads of one KV head, so each key and value is read from
// memory once (attn_dec.comp's one-pass form reads a slice once per query head), and the
// products are matrix products with the heads as the rows (G ≤ 8 of 16; the rest zero).
// `VulkanOptions::attn_cm`; the partials are attn_dec.comp's, merged by attn_combine.comp.
//
// Compiled once per head dimension HEAD_DIM (32, 64, 128: build.rs), as attn_dec_cm_<dim>,
// and with PREP_ON as attn_dec_cm_prep_<dim> (attn_prep.glsl: the queries and the new key
// normed and rotated here, the new key and value stored by the slice that holds the row's
// position, as attn_dec_prep does); both once more with BLOCKS (`attn_dec_cm_blk_<dim>`,
// `attn_dec_cm_prep_blk_<dim>`), the second form below.
// Push constants: attn_dec.comp's block (the host passes the same); `direct` must be 0 and
// `mode` is unused (no output is written here, only partials). Specialization constant 1 = G,
// the KV head's query heads (pc.group; ≤ 8); attn_dec.comp's other constants are ignored.
// Workgroup: 128 invocations, 4 subgroups of 32. Dispatch: (n_head / G, rows, nsplit) as
// attn_dec.comp's, x = the KV head.
// Slices are a multiple of 64 keys long (the host's plan), so the four subgroups take as many
// blocks each, but the last slice's.
// Each subgroup walks its own blocks of KB = 16 keys of the slice (blocks sg, sg + 4, …) with
// its own online softmax: a block's keys and values are loaded into registers (16-byte loads)
// while the block before is multiplied, then put into the subgroup's tile (keys first, then
// values in the same tile); scores S = Q·Kᵀ (16 rows × 16 keys), each row's running max m and
// sum l, weights P = e^(S − m) and the output rows O += P·V, rescaled by e^(m − m') as the max
// moves. Then the four subgroups meet: each row's M = max m, L = Σ l·e^(m − M) and O = Σ
// O·e^(m − M), in subgroup order, stored as the slice's partials [M, L, O].
// BLOCKS, the second form (`VulkanOptions::attn_cm` 2): fewer registers a lane for more
// resident workgroups. The workgroup walks the slice in blocks of KB = 64 keys together: every
// invocation loads its share of a block's keys and values a block ahead, the keys go into the
// one tile (a barrier), subgroup sg makes the scores of keys 16sg .. 16sg + 15 (a barrier),
// the values take the tile while eight invocations a row run its online softmax over the 64
// scores (a barrier), and subgroup sg adds P·V for its quarter of the dimensions (DC / 4
// chunks of 16: 2 accumulators at HD 128 where the first form holds 8), then a barrier before
// the next block's keys. One softmax for the workgroup: no subgroups to meet at the end.
// Precision as attn_fa.comp: Q and P are split into f16 hi + lo parts, each multiplied.

#include "common.glsl"

const uint HD = HEAD_DIM;
layout(constant_id = 1) const uint G = 4;
const uint WG = 128u;
layout(local_size_x = 128) in;

layout(push_constant, std430) uniform PC {
    Floats q;
    Words kc;
    Words vc;
    Floats o;
    Words pos;
    Floats part;
    Words qout;
    Floats sout;
    Words count;
    Floats kraw;  // PREP: the row's raw keys (n_head_kv · HD)
    Floats vraw;  // PREP: its raw values
    Words prm;    // PREP: the rest of qk_prep.comp's parameters (attn_dec.comp lists them)
    uint n_head;
    uint n_head_kv;
    float scale;
    uint window;
    uint split_len;
    uint mode;
    uint group;   // query heads per KV head (= G)
    uint direct;
} pc;

const uint NSG = 4u;              // subgroups a workgroup
#ifdef BLOCKS
const uint KB = 64u;              // keys a block (the workgroup's)
const uint LANES = WG;            // invocations that load a block
const uint NT = 1u;               // tiles of each kind
#else
const uint KB = 16u;              // keys a block (a subgroup's)
const uint LANES = 32u;
const uint NT = NSG;              // a subgroup's own
#endif
const uint LDT = (HD + 8u) / 4u;  // padded row stride of the query and key/value tiles (f16vec4s)
const uint DC = HD / 16u;         // 16-wide chunks of a head
const uint LDS = (KB + 4u) / 4u;  // row stride of the score tiles (vec4s)
const uint LDP = (KB + 8u) / 4u;  // row stride of the weight tiles (f16vec4s)
const uint QPK = HD / 8u;         // 16-byte vectors a key's row
const uint NQ = KB * QPK / LANES; // 16-byte vectors an invocation loads a block, keys or values
const float NEG_BIG = -3.0e38;    // "minus infinity" that keeps exp() arguments finite

// The cooperative-matrix tiles first (16-byte aligned rows).
shared f16vec4 Qh[16u * LDT];        // the queries' f16 part, rows ≥ G zero
shared f16vec4 Ql[16u * LDT];        // and the rest
shared f16vec4 T[NT * KB * LDT];     // a block's keys, then its values (a subgroup's own)
shared vec4 Ss[NT * 16u * LDS];      // 16 rows × KB scores (also staging)
shared f16vec4 Ph[NT * 16u * LDP];   // P, high f16 part
shared f16vec4 Pl[NT * 16u * LDP];   // and the rest
shared float Al[NT * 16u];           // each row's rescale factor
#ifndef BLOCKS
shared float Mx[NSG * 16u];          // per subgroup: each row's m at the end
shared float Lx[NSG * 16u];          // and its l
#endif
shared float qs[G * HD];             // the queries in f32 (PREP makes them here)

#ifdef PREP_ON
#define DFLOAT_SHUFFLE 1
#include "dfloat.glsl"
#include "rope.glsl"
const uint ABL = 0u; // attn_prep.glsl's timing-only ablation: none here
// hsc padded to 12 words: the cooperative-matrix tiles' loads need 16-byte aligned rows,
// whatever order the driver lays the shared arrays out in.
#define HSC_LEN 12
#include "attn_prep.glsl"
#endif

#define CM_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Invocation `lane`'s (of LANES) vectors of the slice's keys j0 .. j0 + KB − 1 (from `begin`
// in the cache, kv head kvh; zeros from the n-th on).
void fetch(Quads c, uint begin, uint j0, uint n, uint kvh, uint lane, out uvec4 r[NQ]) {
    uint kv_dim = pc.n_head_kv * HD;
    [[unroll]] for (uint i = 0u; i < NQ; i++) {
        uint v = lane + LANES * i;
        uint j = j0 + v / QPK;
        r[i] = j < n ? c.v[((begin + j) * kv_dim + kvh * HD) / 8u + v % QPK] : uvec4(0u);
    }
}

// Fetched vectors into the subgroup's tile (from f16vec4 `tb`); under PREP the row's own key
// or value (slice index `inew`) from shared memory instead, its place in the cache perhaps not
// yet written.
void put(uint tb, uvec4 r[NQ], uint j0, uint inew, bool is_v, uint lane) {
    [[unroll]] for (uint i = 0u; i < NQ; i++) {
        uint v = lane + LANES * i;
        uint key = v / QPK, piece = v % QPK;
        uvec4 x = r[i];
#ifdef PREP_ON
        if (j0 + key == inew) {
            uint e = 4u * piece;
            x = is_v ? uvec4(vn[e], vn[e + 1u], vn[e + 2u], vn[e + 3u])
                     : uvec4(kn[e], kn[e + 1u], kn[e + 2u], kn[e + 3u]);
        }
#endif
        uint at = tb + key * LDT + 2u * piece;
        T[at] = f16vec4(unpackFloat2x16(x.x), unpackFloat2x16(x.y));
        T[at + 1u] = f16vec4(unpackFloat2x16(x.z), unpackFloat2x16(x.w));
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = tid / 32u;
    uint lane = tid % 32u;
    uint w = gl_WorkGroupID.x;
    uint t = gl_WorkGroupID.y;
    uint sp = gl_WorkGroupID.z;
    uint nsplit = gl_NumWorkGroups.z;
    uint h0 = w * G;
    uint kvh = h0 / pc.group; // the KV head of all G

    uint p = pc.pos.v[t];
    uint lo = (pc.window > 0u && p + 1u > pc.window) ? p + 1u - pc.window : 0u;
    uint begin = lo + sp * pc.split_len;
    uint end = min(p + 1u, lo + (sp + 1u) * pc.split_len); // keys [begin, end)
    uint n = end > begin ? end - begin : 0u;

    // The first block (the subgroup's; with BLOCKS the workgroup's), loaded before the queries
    // are made.
    Quads k4 = Quads(pc.kc);
    Quads v4 = Quads(pc.vc);
    uvec4 kr[NQ];
    uvec4 vr[NQ];
#ifdef BLOCKS
    uint j_first = 0u;
    uint me = tid;
#else
    uint j_first = KB * sg;
    uint me = lane;
#endif
    fetch(k4, begin, j_first, n, kvh, me, kr);
    fetch(v4, begin, j_first, n, kvh, me, vr);

#ifdef PREP_ON
    bool has_new = begin <= p && p < end;
    prep(t, h0, kvh, p, has_new, has_new, tid); // every slice's workgroup holds all G heads
    uint inew = has_new ? p - begin : 0xFFFFFFFFu;
#else
    uint inew = 0xFFFFFFFFu;
    uint qbase = (t * pc.n_head + h0) * HD; // the G heads are consecutive
    for (uint i = tid; i < G * HD; i += WG) {
        qs[i] = pc.q.v[qbase + i];
    }
    barrier();
#endif

    // The queries as 16 rows of f16 hi + lo parts (rows G .. 15 zero).
    for (uint i = tid; i < 16u * HD / 4u; i += WG) {
        uint r = i / (HD / 4u), d = 4u * (i % (HD / 4u));
        vec4 v = vec4(0.0);
        if (r < G) {
            v = vec4(qs[r * HD + d], qs[r * HD + d + 1u], qs[r * HD + d + 2u], qs[r * HD + d + 3u]);
        }
        f16vec4 hi = f16vec4(v);
        Qh[r * LDT + d / 4u] = hi;
        Ql[r * LDT + d / 4u] = f16vec4(v - vec4(hi));
    }
    // The row of each of this invocation's accumulator elements: a tile of row numbers loaded
    // as an accumulator (elements of matrices of one type map alike). The subgroup's own 16 ×
    // 16 of the score tiles: its tile, or with BLOCKS its 16 columns of the one.
#ifdef BLOCKS
    uint sbase = 4u * sg;
#else
    uint sbase = sg * 16u * LDS;
#endif
    for (uint i = lane; i < 64u; i += 32u) {
        Ss[sbase + (i / 4u) * LDS + i % 4u] = vec4(float(i / 4u));
    }
    barrier();
    CM_C rows;
    coopMatLoad(rows, Ss, sbase, LDS, gl_CooperativeMatrixLayoutRowMajor);
    barrier(); // every subgroup has its rows before the tiles take scores
#ifdef BLOCKS
    // BLOCKS: the workgroup walks the slice in blocks of KB keys together (see the header).
    // 16-wide chunks of the output a subgroup (at HD 32 two subgroups hold one each and two
    // none: the `sg * CPS + c` tests below).
    const uint CPS = (DC + NSG - 1u) / NSG;
    // The softmax's invocations: eight a row, each 8 of a block's 64 keys.
    uint srow = tid / 8u, spart = tid % 8u;
    float m = NEG_BIG;
    float l = 0.0;
    CM_C acc[CPS];
    [[unroll]] for (uint c = 0u; c < CPS; c++) {
        acc[c] = CM_C(0.0);
    }
    for (uint j0 = 0u; j0 < n; j0 += KB) {
        uint jn = j0 + KB;
        put(0u, kr, j0, inew, false, tid);
        barrier(); // the block's keys in the tile
        if (jn < n) {
            fetch(k4, begin, jn, n, kvh, tid, kr);
        }
        // Subgroup sg: the scores of keys 16sg .. 16sg + 15, into columns 16sg .. of Ss.
        CM_C s = CM_C(0.0);
        [[unroll]] for (uint c = 0u; c < DC; c++) {
            CM_A qa;
            CM_B kt;
            coopMatLoad(kt, T, (16u * sg) * LDT + 4u * c, LDT, gl_CooperativeMatrixLayoutColumnMajor);
            coopMatLoad(qa, Qh, 4u * c, LDT, gl_CooperativeMatrixLayoutRowMajor);
            s = coopMatMulAdd(qa, kt, s);
            coopMatLoad(qa, Ql, 4u * c, LDT, gl_CooperativeMatrixLayoutRowMajor);
            s = coopMatMulAdd(qa, kt, s);
        }
        coopMatStore(s, Ss, 4u * sg, LDS, gl_CooperativeMatrixLayoutRowMajor);
        barrier(); // the scores in Ss; the keys read: the tile takes the values
        put(0u, vr, j0, inew, true, tid);
        if (jn < n) {
            fetch(v4, begin, jn, n, kvh, tid, vr);
        }
        // Row srow's keys 8·spart .. + 7: its largest score over the 64 (three shuffles among
        // the row's eight invocations), the weights and their sum.
        float bm = NEG_BIG;
        vec4 sv[2];
        [[unroll]] for (uint q = 0u; q < 2u; q++) {
            sv[q] = Ss[srow * LDS + 2u * spart + q] * pc.scale;
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
                bool in_ = srow < G && j0 + 8u * spart + 4u * q + e < n;
                sv[q][e] = in_ ? sv[q][e] : NEG_BIG;
                bm = max(bm, sv[q][e]);
            }
        }
        bm = max(bm, subgroupShuffleXor(bm, 1u));
        bm = max(bm, subgroupShuffleXor(bm, 2u));
        bm = max(bm, subgroupShuffleXor(bm, 4u));
        float mn = max(m, bm);
        float alpha = exp(m - mn);
        m = mn;
        float bs = 0.0;
        [[unroll]] for (uint q = 0u; q < 2u; q++) {
            vec4 wq;
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
                wq[e] = sv[q][e] > NEG_BIG ? exp(min(sv[q][e] - mn, 0.0)) : 0.0;
            }
            bs += wq.x + wq.y + wq.z + wq.w;
            f16vec4 wh = f16vec4(wq);
            Ph[srow * LDP + 2u * spart + q] = wh;
            Pl[srow * LDP + 2u * spart + q] = f16vec4(wq - vec4(wh));
        }
        bs += subgroupShuffleXor(bs, 1u);
        bs += subgroupShuffleXor(bs, 2u);
        bs += subgroupShuffleXor(bs, 4u);
        l = l * alpha + bs;
        if (spart == 0u) {
            Al[srow] = alpha;
        }
        barrier(); // the weights, the factors and the values in place
        [[unroll]] for (uint i = 0u; i < rows.length(); i++) {
            float a = Al[uint(rows[i])];
            [[unroll]] for (uint c = 0u; c < CPS; c++) {
                acc[c][i] *= a;
            }
        }
        [[unroll]] for (uint kc = 0u; kc < KB / 16u; kc++) {
            CM_A ph, pl;
            coopMatLoad(ph, Ph, 4u * kc, LDP, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(pl, Pl, 4u * kc, LDP, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint c = 0u; c < CPS; c++) {
                if (sg * CPS + c >= DC) {
                    continue; // uniform over the subgroup
                }
                CM_B vt;
                // B: keys 16kc .. of the tile × dimensions of chunk sg·CPS + c, row-major.
                coopMatLoad(vt, T, (16u * kc) * LDT + 4u * (sg * CPS + c), LDT,
                            gl_CooperativeMatrixLayoutRowMajor);
                acc[c] = coopMatMulAdd(ph, vt, acc[c]);
                acc[c] = coopMatMulAdd(pl, vt, acc[c]);
            }
        }
        barrier(); // the tiles are read before the next block's keys
    }
    CLK_MARK(2); // the slice's keys and values taken
    if (spart == 0u && srow < G) {
        uint out_base = ((t * pc.n_head + h0 + srow) * nsplit + sp) * (HD + 2u);
        pc.part.v[out_base] = n > 0u ? m : NEG_BIG;
        pc.part.v[out_base + 1u] = n > 0u ? l : 0.0;
    }
    // Each subgroup's chunks of the output through its 16 columns of Ss.
    [[unroll]] for (uint c = 0u; c < CPS; c++) {
        coopMatStore(acc[c], Ss, 4u * sg, LDS, gl_CooperativeMatrixLayoutRowMajor);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint idx = lane; idx < G * 16u && sg * CPS + c < DC; idx += 32u) {
            uint r = idx / 16u, col = idx % 16u;
            uint out_base = ((t * pc.n_head + h0 + r) * nsplit + sp) * (HD + 2u);
            pc.part.v[out_base + 2u + 16u * (sg * CPS + c) + col] =
                Ss[r * LDS + 4u * sg + col / 4u][col % 4u];
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
    }
    CLK_MARK(3); // the outputs stored
#else

    // This lane's row (two lanes a row, each half of a block's keys).
    uint my_row = lane / 2u;
    uint half_ = lane % 2u;
    float m = NEG_BIG;
    float l = 0.0;
    CM_C acc[DC];
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        acc[c] = CM_C(0.0);
    }
    uint tb = sg * KB * LDT;
    uint pbase = sg * 16u * LDP;
    for (uint j0 = KB * sg; j0 < n; j0 += KB * NSG) {
        uint jn = j0 + KB * NSG; // this subgroup's next block
        put(tb, kr, j0, inew, false, lane);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        if (jn < n) {
            fetch(k4, begin, jn, n, kvh, lane, kr);
        }
        // Scores of the 16 rows × KB keys.
        CM_C s = CM_C(0.0);
        [[unroll]] for (uint c = 0u; c < DC; c++) {
            CM_A qa;
            CM_B kt;
            // B: 16 dims × 16 keys = the tile's key rows read as columns.
            coopMatLoad(kt, T, tb + 4u * c, LDT, gl_CooperativeMatrixLayoutColumnMajor);
            coopMatLoad(qa, Qh, 4u * c, LDT, gl_CooperativeMatrixLayoutRowMajor);
            s = coopMatMulAdd(qa, kt, s);
            coopMatLoad(qa, Ql, 4u * c, LDT, gl_CooperativeMatrixLayoutRowMajor);
            s = coopMatMulAdd(qa, kt, s);
        }
        coopMatStore(s, Ss, sbase, LDS, gl_CooperativeMatrixLayoutRowMajor);
        subgroupMemoryBarrierShared();
        subgroupBarrier(); // the keys are read: the tile takes the values
        put(tb, vr, j0, inew, true, lane);
        if (jn < n) {
            fetch(v4, begin, jn, n, kvh, lane, vr);
        }
        // This lane's half of its row: 8 keys, as 2 vectors.
        float bm = NEG_BIG;
        vec4 sv[2];
        [[unroll]] for (uint q = 0u; q < 2u; q++) {
            sv[q] = Ss[sbase + my_row * LDS + 2u * half_ + q] * pc.scale;
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
                bool in_ = my_row < G && j0 + 8u * half_ + 4u * q + e < n;
                sv[q][e] = in_ ? sv[q][e] : NEG_BIG;
                bm = max(bm, sv[q][e]);
            }
        }
        bm = max(bm, subgroupShuffleXor(bm, 1u));
        float mn = max(m, bm);
        float alpha = exp(m - mn);
        m = mn;
        float bs = 0.0;
        [[unroll]] for (uint q = 0u; q < 2u; q++) {
            vec4 wq;
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
                wq[e] = sv[q][e] > NEG_BIG ? exp(min(sv[q][e] - mn, 0.0)) : 0.0;
            }
            bs += wq.x + wq.y + wq.z + wq.w;
            f16vec4 wh = f16vec4(wq);
            Ph[pbase + my_row * LDP + 2u * half_ + q] = wh;
            Pl[pbase + my_row * LDP + 2u * half_ + q] = f16vec4(wq - vec4(wh));
        }
        l = l * alpha + bs + subgroupShuffleXor(bs, 1u);
        if (half_ == 0u) {
            Al[sg * 16u + my_row] = alpha;
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // The output rows rescaled to the new maxima, then P·V added.
        [[unroll]] for (uint i = 0u; i < rows.length(); i++) {
            float a = Al[sg * 16u + uint(rows[i])];
            [[unroll]] for (uint c = 0u; c < DC; c++) {
                acc[c][i] *= a;
            }
        }
        CM_A ph, pl;
        coopMatLoad(ph, Ph, pbase, LDP, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(pl, Pl, pbase, LDP, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint c = 0u; c < DC; c++) {
            CM_B vt;
            // B: 16 keys × 16 dims, row-major in the tile.
            coopMatLoad(vt, T, tb + 4u * c, LDT, gl_CooperativeMatrixLayoutRowMajor);
            acc[c] = coopMatMulAdd(ph, vt, acc[c]);
            acc[c] = coopMatMulAdd(pl, vt, acc[c]);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier(); // the tile, Ss, Ph, Pl and Al are rewritten by the next block
    }
    CLK_MARK(2); // the slice's keys and values taken (this subgroup's)

    // The subgroups meet: each row's largest m, M; each subgroup's factor e^(m − M); L.
    if (half_ == 0u) {
        Mx[sg * 16u + my_row] = m;
        Lx[sg * 16u + my_row] = l;
    }
    barrier();
    float big = NEG_BIG;
    [[unroll]] for (uint k = 0u; k < NSG; k++) {
        big = max(big, Mx[k * 16u + my_row]);
    }
    if (half_ == 0u) {
        Al[sg * 16u + my_row] = exp(m - big);
    }
    if (sg == 0u && half_ == 0u && my_row < G) {
        float lsum = 0.0;
        [[unroll]] for (uint k = 0u; k < NSG; k++) {
            lsum += Lx[k * 16u + my_row] * exp(Mx[k * 16u + my_row] - big);
        }
        uint out_base = ((t * pc.n_head + h0 + my_row) * nsplit + sp) * (HD + 2u);
        pc.part.v[out_base] = n > 0u ? big : NEG_BIG;
        pc.part.v[out_base + 1u] = n > 0u ? lsum : 0.0;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint i = 0u; i < rows.length(); i++) {
        float a = Al[sg * 16u + uint(rows[i])];
        [[unroll]] for (uint c = 0u; c < DC; c++) {
            acc[c][i] *= a;
        }
    }
    // The output rows, 16 dimensions at a time: each subgroup's through its score tile, added
    // in subgroup order.
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        coopMatStore(acc[c], Ss, sbase, LDS, gl_CooperativeMatrixLayoutRowMajor);
        barrier();
        if (tid < G * 16u) {
            uint r = tid / 16u, col = tid % 16u;
            float a = 0.0;
            [[unroll]] for (uint k = 0u; k < NSG; k++) {
                a += Ss[k * 16u * LDS + r * LDS + col / 4u][col % 4u];
            }
            uint out_base = ((t * pc.n_head + h0 + r) * nsplit + sp) * (HD + 2u);
            pc.part.v[out_base + 2u + 16u * c + col] = a;
        }
        barrier();
    }
    CLK_MARK(3); // the subgroups met
#endif
}
