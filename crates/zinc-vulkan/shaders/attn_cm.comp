#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// attn_cm.comp — causal (optionally sliding-window) attention of prompt rows over the f16 KV
// cache on cooperative matrices (VK_KHR_cooperative_matrix, 16×16×16 f16 → f32): the prompt
// path of attention.comp, same buffers, push constants and semantics (see there).
//
// Compiled once per head dimension HEAD_DIM (32, 64, 128: build.rs), as attn_cm_<dim>.
// Workgroup: 128 invocations = 4 subgroups of 32; subgroup s owns query rows 16s .. 16s + 15
//   of the workgroup's 64, all of one query head.
// Dispatch: (n_head, ceil(nrows / 64), 1).
// Keys go by blocks of KB = 32, loaded into shared memory by the whole workgroup over the union
// of its rows' ranges (rows mask what is not theirs). Two passes, so that the output never needs
// rescaling (a cooperative matrix's elements cannot be addressed by row): the first finds each
// row's largest score, the second accumulates P·V with P = exp(score − max) and the row sums.
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

const uint KB = 32u;           // keys a block
const uint LDK = HD + 8u;      // padded row stride (halves) of the K and V tiles
const uint DC = HD / 16u;      // 16-wide chunks of a head
const uint LDP = KB + 8u;      // row stride (halves) of the P tiles
const float NEG_BIG = -3.0e38; // "minus infinity" that keeps exp() arguments finite

shared float16_t Ks[KB * LDK]; // also stages the queries before the key loop
shared float16_t Vs[KB * LDK];
shared float Ss[4u * 16u * KB];       // per subgroup: 16 rows × KB scores (also output staging)
shared float16_t Ph[4u * 16u * LDP];  // per subgroup: P, high f16 part
shared float16_t Pl[4u * 16u * LDP];  // and the rest
shared float Lr[4u * 16u];            // per subgroup: each row's sum of weights
// The union of the rows' key ranges: [0] lowest, [1] highest + 1 (four words, so every array
// stays 16-byte aligned whatever order the compiler lays them out in: cooperative-matrix loads
// need it).
shared uint range[4];

#define CM_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Keys kb0 .. kb0 + KB − 1 of kv head kvh into a tile (zeros past the cache's end).
void load_tile(Words c, uint kb0, uint kvh, bool into_v) {
    uint kv_dim = pc.n_head_kv * HD;
    for (uint i = gl_LocalInvocationID.x; i < KB * HD / 2u; i += 128u) {
        uint key = i / (HD / 2u);
        uint d2 = i % (HD / 2u);
        uint p = kb0 + key;
        uint w = p < pc.kv_len_max ? c.v[(p * kv_dim + kvh * HD) / 2u + d2] : 0u;
        f16vec2 h = unpackFloat2x16(w);
        if (into_v) {
            Vs[key * LDK + 2u * d2] = h.x;
            Vs[key * LDK + 2u * d2 + 1u] = h.y;
        } else {
            Ks[key * LDK + 2u * d2] = h.x;
            Ks[key * LDK + 2u * d2 + 1u] = h.y;
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

    // The queries, split into f16 hi + lo parts, staged through Ks / Vs into registers.
    CM_A qh[DC];
    CM_A ql[DC];
    for (uint i = tid; i < 64u * HD; i += 128u) {
        uint rr = i / HD, d = i % HD;
        float v = (r0 + rr < pc.nrows) ? pc.q.v[(r0 + rr) * qcols + h * HD + d] : 0.0;
        float16_t hi = float16_t(v);
        // Both staging tiles hold KB rows: rows 0..31 in Ks, 32..63 in Vs (hi), then lo.
        if (rr < KB) {
            Ks[rr * LDK + d] = hi;
        } else {
            Vs[(rr - KB) * LDK + d] = hi;
        }
    }
    barrier();
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        uint rr = 16u * sg;
        if (rr < KB) {
            coopMatLoad(qh[c], Ks, rr * LDK + 16u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        } else {
            coopMatLoad(qh[c], Vs, (rr - KB) * LDK + 16u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
    barrier();
    for (uint i = tid; i < 64u * HD; i += 128u) {
        uint rr = i / HD, d = i % HD;
        float v = (r0 + rr < pc.nrows) ? pc.q.v[(r0 + rr) * qcols + h * HD + d] : 0.0;
        float16_t lo = float16_t(v - float(float16_t(v)));
        if (rr < KB) {
            Ks[rr * LDK + d] = lo;
        } else {
            Vs[(rr - KB) * LDK + d] = lo;
        }
    }
    barrier();
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        uint rr = 16u * sg;
        if (rr < KB) {
            coopMatLoad(ql[c], Ks, rr * LDK + 16u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        } else {
            coopMatLoad(ql[c], Vs, (rr - KB) * LDK + 16u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
        }
    }

    uint sbase = sg * 16u * KB;
    float m = NEG_BIG;
    float l = 0.0;
    CM_C acc[DC];
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        acc[c] = CM_C(0.0);
    }
    for (uint pass = 0u; pass < 2u; pass++) {
        for (uint kb0 = k_lo; kb0 < k_hi; kb0 += KB) {
            barrier(); // the previous block's tiles are no longer read
            load_tile(pc.kc, kb0, kvh, false);
            if (pass == 1u) {
                load_tile(pc.vc, kb0, kvh, true);
            }
            barrier();
            // Scores of this subgroup's 16 rows × KB keys.
            [[unroll]] for (uint kh = 0u; kh < KB / 16u; kh++) {
                CM_C s = CM_C(0.0);
                [[unroll]] for (uint c = 0u; c < DC; c++) {
                    CM_B kt;
                    // B: 16 dims × 16 keys = K rows read as columns.
                    coopMatLoad(kt, Ks, (16u * kh) * LDK + 16u * c, LDK, gl_CooperativeMatrixLayoutColumnMajor);
                    s = coopMatMulAdd(qh[c], kt, s);
                    s = coopMatMulAdd(ql[c], kt, s);
                }
                coopMatStore(s, Ss, sbase + 16u * kh, KB, gl_CooperativeMatrixLayoutRowMajor);
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            // This lane's half of its row: KB/2 keys.
            uint j0 = half_ * (KB / 2u);
            if (pass == 0u) {
                float bm = NEG_BIG;
                for (uint j = j0; j < j0 + KB / 2u; j++) {
                    uint p = kb0 + j;
                    if (live && p >= my_lo && p <= my_pos) {
                        bm = max(bm, Ss[sbase + my_row * KB + j] * pc.scale);
                    }
                }
                bm = max(bm, subgroupShuffleXor(bm, 1u));
                m = max(m, bm);
            } else {
                float bs = 0.0;
                for (uint j = j0; j < j0 + KB / 2u; j++) {
                    uint p = kb0 + j;
                    float w = 0.0;
                    if (live && p >= my_lo && p <= my_pos) {
                        w = exp(min(Ss[sbase + my_row * KB + j] * pc.scale - m, 0.0));
                    }
                    bs += w;
                    float16_t wh = float16_t(w);
                    Ph[sg * 16u * LDP + my_row * LDP + j] = wh;
                    Pl[sg * 16u * LDP + my_row * LDP + j] = float16_t(w - float(wh));
                }
                l += bs + subgroupShuffleXor(bs, 1u);
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                [[unroll]] for (uint kh = 0u; kh < KB / 16u; kh++) {
                    CM_A ph, pl;
                    coopMatLoad(ph, Ph, sg * 16u * LDP + 16u * kh, LDP, gl_CooperativeMatrixLayoutRowMajor);
                    coopMatLoad(pl, Pl, sg * 16u * LDP + 16u * kh, LDP, gl_CooperativeMatrixLayoutRowMajor);
                    [[unroll]] for (uint c = 0u; c < DC; c++) {
                        CM_B vt;
                        // B: 16 keys × 16 dims, row-major in Vs.
                        coopMatLoad(vt, Vs, (16u * kh) * LDK + 16u * c, LDK, gl_CooperativeMatrixLayoutRowMajor);
                        acc[c] = coopMatMulAdd(ph, vt, acc[c]);
                        acc[c] = coopMatMulAdd(pl, vt, acc[c]);
                    }
                }
            }
            subgroupBarrier(); // Ss, Ph and Pl are rewritten by the next block
        }
    }

    // out = acc / l, through this subgroup's score tile as staging.
    if (half_ == 0u) {
        Lr[sg * 16u + my_row] = l;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint c = 0u; c < DC; c++) {
        coopMatStore(acc[c], Ss, sbase, 16u, gl_CooperativeMatrixLayoutRowMajor);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint idx = lane; idx < 256u; idx += 32u) {
            uint rr = idx / 16u;
            uint tt = r0 + 16u * sg + rr;
            if (tt < pc.nrows) {
                float lv = Lr[sg * 16u + rr];
                pc.o.v[tt * qcols + h * HD + 16u * c + idx % 16u] = lv > 0.0 ? Ss[sbase + idx] / lv : 0.0;
            }
        }
        subgroupBarrier();
    }
}
