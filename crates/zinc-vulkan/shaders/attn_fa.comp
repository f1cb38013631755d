#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// attn_fa.comp — causal (optionally sliding-window) attention of prompt rows over the f16 KV
// cache on cooperative matrices (VK_KHR_cooperative_matrix, 16×16×16 f16 → f32) in one pass
// over the keys: the prompt path of attention.comp, same buffers, push constants and semantics
// (see there).
//
// Compiled once per head dimension HEAD_DIM (32, 64, 128: build.rs), as attn_fa_<dim>.
// Workgroup: 128 invocations = 4 subgroups of 32; subgroup s owns query rows 16s .. 16s + 15
//   of the workgroup's 64, all of one query head.
// Dispatch: (n_head, ceil(nrows / 64), 1).
// Keys go by blocks of KB = 32 over the union of the workgroup's rows' ranges (rows mask what
// is not theirs). Each block's K and V are read from the cache into registers one block ahead
// (16-byte loads), so that their latency hides behind the block before; then stored to shared
// memory for the whole workgroup. Per block a subgroup computes its 16 rows' scores S = Q·Kᵀ,
// each row's new running max m' and weights P = exp(S − m'), rescales its output rows by
// exp(m − m') and adds P·V: the online softmax. A cooperative matrix's elements are not
// addressed by row, so the row of each of an invocation's elements is read once from a matrix
// loaded from a tile of row numbers: elements of matrices of one type map alike.
// Precision: K and V are f16 in the cache; Q and P are split into two f16 parts (hi + lo), each
// multiplied, so scores and weights carry ~22 bits as the CPU's f32 arithmetic does.

#include "common.glsl"

const uint HD = HEAD_DIM;
layout(local_size_x = 128) in;

layout(push_constant, std430) uniform PC {
    Floats q;
    Words kc;
    Words vc;
    Floats o;
    Words pos;
    uint n_head;
    uint n_head_kv;
    uint head_dim;
    uint nrows;
    float scale;
    uint window;
    uint kv_len_max;
} pc;

const uint KB = 32u;              // keys a block
const uint LDK = (HD + 8u) / 4u;  // padded row stride of the K and V tiles (f16vec4s)
const uint DC = HD / 16u;         // 16-wide chunks of a head
const uint LDS = (KB + 4u) / 4u;  // row stride of the score tiles (vec4s)
const uint LDP = (KB + 8u) / 4u;  // row stride of the weight tiles (f16vec4s)
const uint QPK = HD / 8u;         // 16-byte vectors a key's row
const uint NQ = KB * QPK / 128u;  // 16-byte vectors an invocation loads a tile (HD / 32)
const float NEG_BIG = -3.0e38;    // "minus infinity" that keeps exp() arguments finite

shared f16vec4 Ks[KB * LDK]; // also stages the queries before the key loop
shared f16vec4 Vs[KB * LDK];
shared vec4 Ss[4u * 16u * LDS];       // per subgroup: 16 rows × KB scores (also staging)
shared f16vec4 Ph[4u * 16u * LDP];    // per subgroup: P, high f16 part
shared f16vec4 Pl[4u * 16u * LDP];    // and the rest
shared float Al[4u * 16u];            // per subgroup: each row's rescale factor, then its sum
// The union of the rows' key ranges: [0] lowest, [1] highest + 1 (four words, so every array
// stays 16-byte aligned whatever order the compiler lays them out in: cooperative-matrix loads
// need it).
shared uint range[4];

#define CM_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// This invocation's vectors of keys kb0 .. kb0 + KB − 1 of kv head kvh (zeros past the
// cache's end).
void fetch(Quads c, uint kb0, uint kvh, out uvec4 r[NQ]) {
    uint kv_dim = pc.n_head_kv * HD;
    [[unroll]] for (uint n = 0u; n < NQ; n++) {
        uint i = gl_LocalInvocationID.x + 128u * n;
        uint p = kb0 + i / QPK;
        r[n] = p < pc.kv_len_max ? c.v[(p * kv_dim + kvh * HD) / 8u + i % QPK] : uvec4(0u);
    }
}

// Fetched vectors into a tile.
void put(bool into_v, uvec4 r[NQ]) {
    [[unroll]] for (uint n = 0u; n < NQ; n++) {
        uint i = gl_LocalInvocationID.x + 128u * n;
        uint at = (i / QPK) * LDK + 2u * (i % QPK);
        f16vec4 a = f16vec4(unpackFloat2x16(r[n].x), unpackFloat2x16(r[n].y));
        f16vec4 b = f16vec4(unpackFloat2x16(r[n].z), unpackFloat2x16(r[n].w));
        if (into_v) {
            Vs[at] = a;
            Vs[at + 1u] = b;
        } else {
            Ks[at] = a;
            Ks[at + 1u] = b;
        }
    }
}

// The queries of the workgroup's 64 rows, f16 part `lo` (0: v's f16, 1: the rest), into the
// staging tiles: rows 0..31 in Ks, 32..63 in Vs.
void stage_q(uint r0, uint h, bool lo) {
    uint qcols = pc.n_head * HD;
    for (uint i = gl_LocalInvocationID.x; i < 64u * HD / 4u; i += 128u) {
        uint rr = i / (HD / 4u), d = 4u * (i % (HD / 4u));
        vec4 v = vec4(0.0);
        if (r0 + rr < pc.nrows) {
            uint at = (r0 + rr) * qcols + h * HD + d;
            v = vec4(pc.q.v[at], pc.q.v[at + 1u], pc.q.v[at + 2u], pc.q.v[at + 3u]);
        }
        f16vec4 hi = f16vec4(v);
        f16vec4 x = lo ? f16vec4(v - vec4(hi)) : hi;
        uint at = (rr % KB) * LDK + d / 4u;
        if (rr < KB) {
            Ks[at] = x;
        } else {
            Vs[at] = x;
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = tid / 32u;
    uint lane = tid % 32u;
    uint h = gl_WorkGroupID.x;
    uint kvh = h / (pc.n_head / pc.n_head_kv);
    uint r0 = gl_WorkGroupID.y * 64u;
    uint qcols = pc.n_head * HD;

    // The union of the workgroup's key ranges.
    if (tid == 0u) {
        range[0] = 0xFFFFFFFFu;
        range[1] = 0u;
    }
    barrier();
    if (tid < 64u && r0 + tid < pc.nrows) {
        uint p = pc.pos.v[r0 + tid];
        uint lo = pc.window > 0u ? (p + 1u > pc.window ? p + 1u - pc.window : 0u) : 0u;
        atomicMin(range[0], lo);
        atomicMax(range[1], p + 1u);
    }
    barrier();
    uint k_lo = (range[0] / KB) * KB;
    uint k_hi = range[1];

    // This lane's row (two lanes a row, each half of a key block).
    uint my_row = lane / 2u;
    uint half_ = lane % 2u;
    uint t = r0 + 16u * sg + my_row;
    bool live = t < pc.nrows;
    uint my_pos = live ? pc.pos.v[t] : 0u;
    uint my_lo = pc.window > 0u ? (my_pos + 1u > pc.window ? my_pos + 1u - pc.window : 0u) : 0u;
    // The subgroup's own key range, so that it skips blocks none of its rows sees.
    uint sg_lo = live ? my_lo : 0xFFFFFFFFu;
    uint sg_hi = live ? my_pos + 1u : 0u;
    [[unroll]] for (uint s = 1u; s < 32u; s <<= 1) {
        sg_lo = min(sg_lo, subgroupShuffleXor(sg_lo, s));
        sg_hi = max(sg_hi, subgroupShuffleXor(sg_hi, s));
    }

    // The queries, split into f16 hi + lo parts, staged through Ks / Vs into registers.
    CM_A qh[DC];
    CM_A ql[DC];
    uint qoff = (16u * sg % KB) * LDK;
    stage_q(r0, h, false);
    barrier();
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        if (sg < 2u) {
            coopMatLoad(qh[c], Ks, qoff + 4u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        } else {
            coopMatLoad(qh[c], Vs, qoff + 4u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
    barrier();
    stage_q(r0, h, true);
    barrier();
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        if (sg < 2u) {
            coopMatLoad(ql[c], Ks, qoff + 4u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        } else {
            coopMatLoad(ql[c], Vs, qoff + 4u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        }
    }

    // The row of each of this invocation's accumulator elements: a tile of row numbers
    // loaded as an accumulator (through this subgroup's score tile).
    uint sbase = sg * 16u * LDS;
    for (uint i = lane; i < 64u; i += 32u) {
        float r = float(i / 4u);
        Ss[sbase + (i / 4u) * LDS + i % 4u] = vec4(r);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    CM_C rows;
    coopMatLoad(rows, Ss, sbase, LDS, gl_CooperativeMatrixLayoutRowMajor);
    subgroupBarrier();

    float m = NEG_BIG;
    float l = 0.0;
    CM_C acc[DC];
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        acc[c] = CM_C(0.0);
    }
    Quads k4 = Quads(pc.kc);
    Quads v4 = Quads(pc.vc);
    uvec4 kr[NQ];
    uvec4 vr[NQ];
    fetch(k4, k_lo, kvh, kr);
    fetch(v4, k_lo, kvh, vr);
    uint pbase = sg * 16u * LDP + my_row * LDP + 4u * half_;
    for (uint kb0 = k_lo; kb0 < k_hi; kb0 += KB) {
        barrier(); // the previous block's tiles are no longer read
        put(false, kr);
        put(true, vr);
        barrier();
        if (kb0 + KB < k_hi) {
            fetch(k4, kb0 + KB, kvh, kr);
            fetch(v4, kb0 + KB, kvh, vr);
        }
        if (kb0 >= sg_hi || kb0 + KB <= sg_lo) {
            continue; // none of this subgroup's rows sees these keys
        }
        // Scores of this subgroup's 16 rows × KB keys.
        [[unroll]] for (uint kh = 0u; kh < KB / 16u; kh++) {
            CM_C s = CM_C(0.0);
            [[unroll]] for (uint c = 0u; c < DC; c++) {
                CM_B kt;
                // B: 16 dims × 16 keys = K rows read as columns.
                coopMatLoad(kt, Ks, (16u * kh) * LDK + 4u * c, LDK, gl_CooperativeMatrixLayoutColumnMajor);
                s = coopMatMulAdd(qh[c], kt, s);
                s = coopMatMulAdd(ql[c], kt, s);
            }
            coopMatStore(s, Ss, sbase + 4u * kh, LDS, gl_CooperativeMatrixLayoutRowMajor);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // This lane's half of its row: KB/2 keys, as 4 vectors.
        uint j0 = half_ * (KB / 2u);
        vec4 sv[4];
        float bm = NEG_BIG;
        [[unroll]] for (uint q = 0u; q < 4u; q++) {
            sv[q] = Ss[sbase + my_row * LDS + half_ * 4u + q] * pc.scale;
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
                uint p = kb0 + j0 + 4u * q + e;
                bool in_ = live && p >= my_lo && p <= my_pos;
                sv[q][e] = in_ ? sv[q][e] : NEG_BIG;
                bm = max(bm, sv[q][e]);
            }
        }
        bm = max(bm, subgroupShuffleXor(bm, 1u));
        float mn = max(m, bm);
        float alpha = exp(m - mn);
        m = mn;
        float bs = 0.0;
        [[unroll]] for (uint q = 0u; q < 4u; q++) {
            vec4 w;
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
                w[e] = sv[q][e] > NEG_BIG ? exp(min(sv[q][e] - mn, 0.0)) : 0.0;
            }
            bs += w.x + w.y + w.z + w.w;
            f16vec4 wh = f16vec4(w);
            Ph[pbase + q] = wh;
            Pl[pbase + q] = f16vec4(w - vec4(wh));
        }
        l = l * alpha + bs + subgroupShuffleXor(bs, 1u);
        if (half_ == 0u) {
            Al[sg * 16u + my_row] = alpha;
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // The output rows rescaled to the new maxima.
        [[unroll]] for (uint i = 0u; i < rows.length(); i++) {
            float a = Al[sg * 16u + uint(rows[i])];
            [[unroll]] for (uint c = 0u; c < DC; c++) {
                acc[c][i] *= a;
            }
        }
        [[unroll]] for (uint kh = 0u; kh < KB / 16u; kh++) {
            CM_A ph, pl;
            coopMatLoad(ph, Ph, sg * 16u * LDP + 4u * kh, LDP, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(pl, Pl, sg * 16u * LDP + 4u * kh, LDP, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint c = 0u; c < DC; c++) {
                CM_B vt;
                // B: 16 keys × 16 dims, row-major in Vs.
                coopMatLoad(vt, Vs, (16u * kh) * LDK + 4u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
                acc[c] = coopMatMulAdd(ph, vt, acc[c]);
                acc[c] = coopMatMulAdd(pl, vt, acc[c]);
            }
        }
        subgroupBarrier(); // Ss, Ph, Pl and Al are rewritten by the next block
    }

    // out = acc / l, through this subgroup's score tile as staging.
    if (half_ == 0u) {
        Al[sg * 16u + my_row] = l > 0.0 ? 1.0 / l : 0.0;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint i = 0u; i < rows.length(); i++) {
        float a = Al[sg * 16u + uint(rows[i])];
        [[unroll]] for (uint c = 0u; c < DC; c++) {
            acc[c][i] *= a;
        }
    }
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        coopMatStore(acc[c], Ss, sbase, LDS, gl_CooperativeMatrixLayoutRowMajor);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint idx = lane; idx < 64u; idx += 32u) {
            uint rr = idx / 4u;
            uint tt = r0 + 16u * sg + rr;
            if (tt < pc.nrows) {
                vec4 v = Ss[sbase + rr * LDS + idx % 4u];
                uint at = tt * qcols + h * HD + 16u * c + 4u * (idx % 4u);
                pc.o.v[at] = v.x;
                pc.o.v[at + 1u] = v.y;
                pc.o.v[at + 2u] = v.z;
                pc.o.v[at + 3u] = v.w;
            }
        }
        subgroupBarrier();
    }
}
