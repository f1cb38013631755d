#version 450
// attn_combine.comp — split-K attention, pass 2: merges the nsplit partials of attn_split.comp.
//
// Buffers (device addresses in the push constants):
//   part : Floats — partials: slice s of (row t, head h) at
//                   ((t·n_head + h)·nsplit + s)·(head_dim + 2): [m, l, acc[head_dim]]
//   o    : Floats — nrows × (n_head·head_dim) outputs, head h of row t at o[(t·n_head + h)·head_dim ..]
// Push constants (std430, in order): Floats part; Floats o; uint n_head; uint head_dim;
//   uint nrows; uint nsplit.
// Specialization constant 0: WG, the workgroup size (default 64).
// Dispatch: (n_head, nrows, 1) workgroups: x = head h, y = row t.
// M = max_s m_s; L = Σ_s l_s·e^(m_s − M); o[d] = Σ_s acc_s[d]·e^(m_s − M) / L
// (empty slices have m_s = −3.0e38, so their weight is 0). Every invocation computes M and L
// itself (nsplit is small) and writes dimensions d = tid, tid + WG, ….

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats part;
    Floats o;
    uint n_head;
    uint head_dim;
    uint nrows;
    uint nsplit;
} pc;

void main() {
    uint h = gl_WorkGroupID.x;
    uint t = gl_WorkGroupID.y;
    if (h >= pc.n_head || t >= pc.nrows) {
        return;
    }
    uint tid = gl_LocalInvocationID.x;
    uint hd = pc.head_dim;
    uint stride = hd + 2u;
    uint base = (t * pc.n_head + h) * pc.nsplit * stride;

    float mx = -3.0e38;
    for (uint s = 0u; s < pc.nsplit; s++) {
        mx = max(mx, pc.part.v[base + s * stride]);
    }
    float lsum = 0.0;
    for (uint s = 0u; s < pc.nsplit; s++) {
        lsum += pc.part.v[base + s * stride + 1u] * exp(pc.part.v[base + s * stride] - mx);
    }
    float inv_l = (lsum > 0.0) ? 1.0 / lsum : 0.0;
    uint ooff = (t * pc.n_head + h) * hd;
    for (uint d = tid; d < hd; d += WG) {
        float a = 0.0;
        for (uint s = 0u; s < pc.nsplit; s++) {
            a += pc.part.v[base + s * stride + 2u + d] * exp(pc.part.v[base + s * stride] - mx);
        }
        pc.o.v[ooff + d] = a * inv_l;
    }
}
