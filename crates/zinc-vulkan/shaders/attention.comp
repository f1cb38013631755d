#version 450
#extension GL_EXT_control_flow_attributes : require
// attention.comp — causal (optionally sliding-window) attention of query rows over the f16 KV
// cache, one workgroup per (head, query row), online softmax over chunks of WG keys.
//
// Buffers (device addresses in the push constants):
//   q   : Floats — nrows × (n_head·head_dim) queries, row-major f32; head h of row t at
//                  q[t·n_head·head_dim + h·head_dim ..]
//   kc  : Words  — K cache of the layer: f16 pairs, value j of position p at half index
//                  p·kv_dim + j (word (p·kv_dim + j)/2, low half = even j), kv_dim = n_head_kv·head_dim
//   vc  : Words  — V cache, same layout
//   o   : Floats — nrows × (n_head·head_dim) outputs, same layout as q
//   pos : Words  — nrows positions (u32): row t attends to keys lo..=pos[t]
// Push constants (std430, in order): Floats q; Words kc; Words vc; Floats o; Words pos;
//   uint n_head; uint n_head_kv; uint head_dim; uint nrows; float scale; uint window;
//   uint kv_len_max.  (kv_len_max — the largest pos + 1 — is not needed here.)
// Specialization constant 0: WG, the workgroup size (default 64; any value ≥ 1).
// Dispatch: (n_head, nrows < 64 ? nrows : ceil(nrows / 4), 1) workgroups: gl_WorkGroupID.x = head
//   h, gl_WorkGroupID.y = row t (fewer than 64 rows) or rows 4y .. 4y + 3 (64 or more).
// Semantics: kv head = h / (n_head / n_head_kv); p = pos[t]; lo = window > 0 ? max(0, p+1−window) : 0;
//   score_j = scale · dot(q, K[j]) for j in lo..=p; o = Σ_j softmax(score)_j · V[j].
// Each chunk of WG keys: invocation tid scores key j0 + tid; the chunk max and the sum of
// exp(score − m) are read back from shared memory by every invocation (identical results);
// the output accumulators live in shared memory, dimension d owned by invocation d % WG.
// head_dim ≤ 512 and even.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

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

const uint MAX_HEAD_DIM = 512u;
const float NEG_BIG = -3.0e38; // "minus infinity" that keeps exp() arguments finite

shared float qs[MAX_HEAD_DIM];
shared float acc[MAX_HEAD_DIM];
shared float ps[WG];
// Rows per workgroup on the prompt path (64 rows or more).
const uint R = 4u;
shared float qr[R * MAX_HEAD_DIM];
shared float ar[R * MAX_HEAD_DIM];
shared float pr[R * WG];

float round_f16(float v) {
    return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
}

// Fewer than 64 query rows: the CPU backend's arithmetic (llama.cpp's CPU flash attention), so
// decoding follows the CPU oracle — Q rounded to f16, keys taken one at a time with an online
// softmax, the V accumulator rounded to f16 after every update.
void attend_f16(uint t, uint h, uint tid, uint hd, uint kvh, uint kv_dim, uint qoff, uint lo, uint p) {
    for (uint d = tid; d < hd; d += WG) {
        qs[d] = round_f16(pc.q.v[qoff + d]);
        acc[d] = 0.0;
    }
    barrier();
    float m = NEG_BIG;
    float sum = 0.0;
    for (uint c = lo; c <= p; c++) {
        uint kb = c * kv_dim + kvh * hd;
        if (tid == 0u) {
            // The CPU's dot_f32 order: eight running sums (lane d % 8, multiply then add, not
            // fused), then summed left to right; the remainder (hd % 8) last.
            precise float a8[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            uint h8 = hd - hd % 8u;
            for (uint d = 0u; d < h8; d += 8u) {
                [[unroll]] for (uint k = 0u; k < 8u; k++) {
                    precise float prod = qs[d + k] * unpackHalf2x16(pc.kc.v[(kb + d + k) / 2u])[(kb + d + k) & 1u];
                    a8[k] = a8[k] + prod;
                }
            }
            precise float tail = 0.0;
            for (uint d = h8; d < hd; d++) {
                precise float prod = qs[d] * unpackHalf2x16(pc.kc.v[(kb + d) / 2u])[(kb + d) & 1u];
                tail = tail + prod;
            }
            precise float total = 0.0;
            [[unroll]] for (uint k = 0u; k < 8u; k++) {
                total = total + a8[k];
            }
            ps[0] = total + tail;
        }
        barrier();
        float s = ps[0] * pc.scale;
        barrier(); // all have read the score before ps is reused
        float ms = 1.0;
        float vs = 1.0;
        if (s > m) {
            ms = exp(m - s);
            m = s;
        } else {
            vs = exp(s - m);
        }
        for (uint d = tid; d < hd; d += WG) {
            float a = acc[d];
            if (ms != 1.0) {
                a = round_f16(a * ms);
            }
            float v = unpackHalf2x16(pc.vc.v[(kb + d) / 2u])[(kb + d) & 1u];
            acc[d] = round_f16(fma(v, vs, a));
        }
        sum = sum * ms + vs;
    }
    float inv = (sum == 0.0) ? 0.0 : 1.0 / sum;
    for (uint d = tid; d < hd; d += WG) {
        pc.o.v[qoff + d] = acc[d] * inv;
    }
}

// 64 rows or more (prompts): R consecutive query rows of one head per workgroup share every
// key and value read. Keys go in chunks of WG: invocation tid scores key j0 + tid for each row,
// the rows' chunk maxima and sums come from shared memory (every invocation reads the same
// values), and dimension d of every row's output accumulator is owned by invocation d % WG.
void attend_rows(uint h, uint tid, uint hd, uint kvh, uint kv_dim) {
    uint t0 = gl_WorkGroupID.y * R;
    uint nr = min(R, pc.nrows - t0);
    uint lo_r[R];
    uint p_r[R];
    float m[R];
    float l[R];
    uint jlo = 0xFFFFFFFFu, jhi = 0u;
    [[unroll]] for (uint r = 0u; r < R; r++) {
        uint t = t0 + min(r, nr - 1u); // past the end: repeat the last row (not written)
        p_r[r] = pc.pos.v[t];
        lo_r[r] = (pc.window > 0u && p_r[r] + 1u > pc.window) ? p_r[r] + 1u - pc.window : 0u;
        jlo = min(jlo, lo_r[r]);
        jhi = max(jhi, p_r[r]);
        m[r] = NEG_BIG;
        l[r] = 0.0;
        for (uint d = tid; d < hd; d += WG) {
            qr[r * MAX_HEAD_DIM + d] = pc.q.v[(t * pc.n_head + h) * hd + d];
            ar[r * MAX_HEAD_DIM + d] = 0.0;
        }
    }
    barrier();
    for (uint j0 = jlo; j0 <= jhi; j0 += WG) {
        uint j = j0 + tid;
        float s[R];
        [[unroll]] for (uint r = 0u; r < R; r++) {
            s[r] = 0.0;
        }
        if (j <= jhi) {
            uint kw = (j * kv_dim + kvh * hd) / 2u; // even: kv_dim and hd are even
            for (uint d2 = 0u; d2 < hd / 2u; d2++) {
                vec2 kk = unpackHalf2x16(pc.kc.v[kw + d2]);
                [[unroll]] for (uint r = 0u; r < R; r++) {
                    s[r] += qr[r * MAX_HEAD_DIM + 2u * d2] * kk.x + qr[r * MAX_HEAD_DIM + 2u * d2 + 1u] * kk.y;
                }
            }
        }
        [[unroll]] for (uint r = 0u; r < R; r++) {
            bool valid = j >= lo_r[r] && j <= p_r[r];
            pr[r * WG + tid] = valid ? pc.scale * s[r] : NEG_BIG;
        }
        barrier();
        float corr[R];
        [[unroll]] for (uint r = 0u; r < R; r++) {
            float cm = m[r];
            for (uint jj = 0u; jj < WG; jj++) {
                cm = max(cm, pr[r * WG + jj]);
            }
            corr[r] = exp(m[r] - cm);
            m[r] = cm;
        }
        barrier(); // every invocation has read the scores
        [[unroll]] for (uint r = 0u; r < R; r++) {
            float sc = pr[r * WG + tid];
            pr[r * WG + tid] = sc > NEG_BIG ? exp(sc - m[r]) : 0.0;
        }
        barrier();
        [[unroll]] for (uint r = 0u; r < R; r++) {
            float lsum = 0.0;
            for (uint jj = 0u; jj < WG; jj++) {
                lsum += pr[r * WG + jj];
            }
            l[r] = l[r] * corr[r] + lsum;
        }
        uint nvalid = min(WG, jhi + 1u - j0);
        for (uint d = tid; d < hd; d += WG) {
            float a[R];
            [[unroll]] for (uint r = 0u; r < R; r++) {
                a[r] = ar[r * MAX_HEAD_DIM + d] * corr[r];
            }
            uint vw = (j0 * kv_dim + kvh * hd + d) / 2u;
            uint sel = d & 1u;
            for (uint jj = 0u; jj < nvalid; jj++) {
                float v = unpackHalf2x16(pc.vc.v[vw + jj * (kv_dim / 2u)])[sel];
                [[unroll]] for (uint r = 0u; r < R; r++) {
                    a[r] += pr[r * WG + jj] * v;
                }
            }
            [[unroll]] for (uint r = 0u; r < R; r++) {
                ar[r * MAX_HEAD_DIM + d] = a[r];
            }
        }
        barrier(); // before the next chunk overwrites pr
    }
    for (uint r = 0u; r < nr; r++) {
        float inv_l = (l[r] > 0.0) ? 1.0 / l[r] : 0.0;
        uint qoff = ((t0 + r) * pc.n_head + h) * hd;
        for (uint d = tid; d < hd; d += WG) {
            pc.o.v[qoff + d] = ar[r * MAX_HEAD_DIM + d] * inv_l;
        }
    }
}

void main() {
    uint h = gl_WorkGroupID.x;
    uint t = gl_WorkGroupID.y; // the row; with 64 rows or more, the group of R rows
    if (h >= pc.n_head || (pc.nrows < 64u ? t : t * R) >= pc.nrows) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint hd = pc.head_dim;
    uint kvh = h / (pc.n_head / pc.n_head_kv);
    uint kv_dim = pc.n_head_kv * hd;
    if (pc.nrows < 64u) {
        uint p = pc.pos.v[t];
        uint lo = (pc.window > 0u && p + 1u > pc.window) ? p + 1u - pc.window : 0u;
        attend_f16(t, h, tid, hd, kvh, kv_dim, (t * pc.n_head + h) * hd, lo, p);
        return;
    }
    attend_rows(h, tid, hd, kvh, kv_dim);
}
