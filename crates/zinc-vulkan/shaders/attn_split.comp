#version 450
// attn_split.comp — split-K attention for long contexts, pass 1: each workgroup attends one
// query row / head to one slice of its keys and writes an unnormalized partial result;
// attn_combine.comp merges the slices.
//
// Buffers (device addresses in the push constants):
//   q, kc, vc, o, pos — as attention.comp (o is not written here)
//   part : Floats — partials: slice s of (row t, head h) at
//                   ((t·n_head + h)·nsplit + s)·(head_dim + 2): [m, l, acc[head_dim]]
// Push constants (std430, in order; addresses first as in every block, so `part` follows `pos`):
//   Floats q; Words kc; Words vc; Floats o; Words pos; Floats part; uint n_head; uint n_head_kv;
//   uint head_dim; uint nrows; float scale; uint window; uint kv_len_max; uint split_len.
// Specialization constant 0: WG, the workgroup size (default 64; any value ≥ 1).
// Dispatch: (n_head, nrows, nsplit) workgroups: x = head h, y = row t, z = slice s;
//   nsplit = gl_NumWorkGroups.z (the host picks nsplit·split_len ≥ kv_len_max).
// Slice s covers keys [lo + s·split_len, min(p + 1, lo + (s+1)·split_len)) with p = pos[t],
//   lo = window > 0 ? max(0, p+1−window) : 0, and writes m = max score, l = Σ exp(score − m),
//   acc = Σ exp(score − m)·V[j]; an empty slice writes m = −3.0e38, l = 0, acc = 0.
// Scores and the online softmax are computed as in attention.comp.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats q;
    Words kc;
    Words vc;
    Floats o;
    Words pos;
    Floats part;
    uint n_head;
    uint n_head_kv;
    uint head_dim;
    uint nrows;
    float scale;
    uint window;
    uint kv_len_max;
    uint split_len;
} pc;

const uint MAX_HEAD_DIM = 512u;
const float NEG_BIG = -3.0e38; // the empty-slice sentinel; keeps exp() arguments finite

shared float qs[MAX_HEAD_DIM];
shared float acc[MAX_HEAD_DIM];
shared float ps[WG];

void main() {
    uint h = gl_WorkGroupID.x;
    uint t = gl_WorkGroupID.y;
    uint sp = gl_WorkGroupID.z;
    uint nsplit = gl_NumWorkGroups.z;
    if (h >= pc.n_head || t >= pc.nrows) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint hd = pc.head_dim;
    uint kvh = h / (pc.n_head / pc.n_head_kv);
    uint kv_dim = pc.n_head_kv * hd;
    uint qoff = (t * pc.n_head + h) * hd;

    for (uint d = tid; d < hd; d += WG) {
        qs[d] = pc.q.v[qoff + d];
        acc[d] = 0.0;
    }
    uint p = pc.pos.v[t];
    uint lo = (pc.window > 0u && p + 1u > pc.window) ? p + 1u - pc.window : 0u;
    uint begin = lo + sp * pc.split_len;
    uint end = min(p + 1u, lo + (sp + 1u) * pc.split_len); // keys [begin, end)
    float m = NEG_BIG;
    float l = 0.0;
    barrier();

    for (uint j0 = begin; j0 < end; j0 += WG) {
        uint j = j0 + tid;
        bool valid = j < end;
        float s = NEG_BIG;
        if (valid) {
            uint kw = (j * kv_dim + kvh * hd) / 2u; // even: kv_dim and hd are even
            float dot_qk = 0.0;
            for (uint d2 = 0u; d2 < hd / 2u; d2++) {
                vec2 kk = unpackHalf2x16(pc.kc.v[kw + d2]);
                dot_qk += qs[2u * d2] * kk.x + qs[2u * d2 + 1u] * kk.y;
            }
            s = pc.scale * dot_qk;
        }
        ps[tid] = s;
        barrier();
        float cm = m;
        for (uint jj = 0u; jj < WG; jj++) {
            cm = max(cm, ps[jj]);
        }
        float corr = exp(m - cm);
        barrier(); // every invocation has read the scores
        ps[tid] = valid ? exp(s - cm) : 0.0;
        barrier();
        float lsum = 0.0;
        for (uint jj = 0u; jj < WG; jj++) {
            lsum += ps[jj];
        }
        l = l * corr + lsum;
        uint nvalid = min(WG, end - j0);
        for (uint d = tid; d < hd; d += WG) {
            float a = acc[d] * corr;
            uint vw = (j0 * kv_dim + kvh * hd + d) / 2u;
            uint sel = d & 1u;
            for (uint jj = 0u; jj < nvalid; jj++) {
                a += ps[jj] * unpackHalf2x16(pc.vc.v[vw + jj * (kv_dim / 2u)])[sel];
            }
            acc[d] = a;
        }
        m = cm;
        barrier(); // before the next chunk overwrites ps
    }

    uint out_base = ((t * pc.n_head + h) * nsplit + sp) * (hd + 2u);
    if (tid == 0u) {
        pc.part.v[out_base] = m;
        pc.part.v[out_base + 1u] = l;
    }
    for (uint d = tid; d < hd; d += WG) {
        pc.part.v[out_base + 2u + d] = acc[d];
    }
}
