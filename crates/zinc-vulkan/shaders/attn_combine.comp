#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// attn_combine.comp — split-K attention, pass 2: merges the nsplit partials of attn_split.comp
// or attn_dec.comp, HPB consecutive heads a workgroup. With a mode, the merged rows — the
// out-projection's input, HPB heads making whole quantization blocks — are also quantized for
// its integer-dot mat-vec (quant8.glsl), in the same dispatch.
//
// M = max_s m_s; L = Σ_s l_s·e^(m_s − M); o[d] = Σ_s acc_s[d]·e^(m_s − M) / L (empty slices have
// m_s = −3.0e38, so their weight is 0).
//
// Buffers (device addresses in the push constants):
//   part : Floats — partials: slice s of (row t, head h) at
//                   ((t·n_head + h)·nsplit + s)·(head_dim + 2): [m, l, acc[head_dim]]
//   o    : Floats — nrows × (n_head·head_dim) outputs
//   q, s         — o quantized (quant8.glsl's layout, over the flattened rows; mode > 0)
// Push constants (std430, in order): Floats part; Floats o; Words q; Floats s; uint n_head;
//   uint head_dim; uint nrows; uint nsplit; uint hpb (≤ 8, dividing n_head; with a mode,
//   hpb·head_dim a multiple of the block: 32 for mode 1, 256 for mode 2); uint mode (0: no
//   quantization).
// Workgroup: 64 invocations, fixed; each takes 4 consecutive outputs of a 256-output span.
// Each slice's weight e^(m_s − M) is computed once into shared memory (nsplit ≤ 128), the m and
// l of every slice loaded at once: the same numbers, in the same order, as computing it per value.
// attn_combine_ahead (this file with AHEAD, `VulkanOptions::combine_ahead`): an output's values
// of SA = 8 slices loaded together, then summed in slice order (the same sums in the same order;
// the plain loop leaves the compiler a slice's loads at a time).
// Dispatch: (n_head / hpb, nrows, 1) workgroups.

#include "common.glsl"

const uint WG = 64u;
layout(local_size_x = 64) in;

layout(push_constant, std430) uniform PC {
    Floats part;
    Floats o;
    Words q;
    Floats s;
    uint n_head;
    uint head_dim;
    uint nrows;
    uint nsplit;
    uint hpb;
    uint mode;
} pc;

#include "quant8.glsl"

const uint MAXS = 128u; // the most slices (the host's MAX_SPLITS)
#ifdef AHEAD
const uint SA = 8u;     // slices whose partials an invocation loads at once
#endif
shared float mls[16]; // per head of the group: the largest m, 1 / L
shared float ws[8u * MAXS]; // per head and slice: m_s, then e^(m_s − M)
shared float ls[8u * MAXS]; // per head and slice: l_s

void main() {
    uint h0 = gl_WorkGroupID.x * pc.hpb;
    uint t = gl_WorkGroupID.y;
    uint tid = gl_LocalInvocationID.x;
    uint hd = pc.head_dim;
    uint stride = hd + 2u;
    uint ns = pc.nsplit;
    // Every slice's m and l at once (independent loads), then each head's M, then each
    // slice's weight once, then L summed in slice order.
    for (uint i = tid; i < pc.hpb * ns; i += WG) {
        uint hh = i / ns, s = i % ns;
        uint at = ((t * pc.n_head + h0 + hh) * ns + s) * stride;
        ws[hh * MAXS + s] = pc.part.v[at];
        ls[hh * MAXS + s] = pc.part.v[at + 1u];
    }
    barrier();
    if (tid < pc.hpb) {
        float mx = -3.0e38;
        for (uint s = 0u; s < ns; s++) {
            mx = max(mx, ws[tid * MAXS + s]);
        }
        mls[2u * tid] = mx;
    }
    barrier();
    for (uint i = tid; i < pc.hpb * ns; i += WG) {
        uint hh = i / ns, s = i % ns;
        ws[hh * MAXS + s] = exp(ws[hh * MAXS + s] - mls[2u * hh]);
    }
    barrier();
    if (tid < pc.hpb) {
        float lsum = 0.0;
        for (uint s = 0u; s < ns; s++) {
            lsum += ls[tid * MAXS + s] * ws[tid * MAXS + s];
        }
        mls[2u * tid + 1u] = (lsum > 0.0) ? 1.0 / lsum : 0.0;
    }
    barrier();
    uint span = pc.hpb * hd;
    uint ooff = (t * pc.n_head + h0) * hd;
    for (uint j0 = 0u; j0 < span; j0 += 256u) {
        uint e = j0 + 4u * tid;
        bool live = e < span; // span is a multiple of 32: a word is wholly in or out
        vec4 v = vec4(0.0);
        if (live) {
            vec4 a = vec4(0.0);
#ifdef AHEAD
            // The four outputs are of one head (hd and e multiples of 4). SA slices' loads
            // issued together before their products, each output still summed in slice order.
            uint hh = e / hd;
            uint base = (t * pc.n_head + h0 + hh) * ns * stride + 2u + e % hd;
            for (uint s0 = 0u; s0 < ns; s0 += SA) {
                vec4 x[SA];
                [[unroll]] for (uint u = 0u; u < SA; u++) {
                    uint s = s0 + u;
                    [[unroll]] for (uint k = 0u; k < 4u; k++) {
                        x[u][k] = s < ns ? pc.part.v[base + s * stride + k] : 0.0;
                    }
                }
                [[unroll]] for (uint u = 0u; u < SA; u++) {
                    if (s0 + u < ns) {
                        [[unroll]] for (uint k = 0u; k < 4u; k++) {
                            a[k] += x[u][k] * ws[hh * MAXS + s0 + u];
                        }
                    }
                }
            }
#else
            uint base[4];
            for (uint k = 0u; k < 4u; k++) {
                uint hh = (e + k) / hd;
                base[k] = (t * pc.n_head + h0 + hh) * ns * stride + 2u + (e + k) % hd;
            }
            // The four outputs' loads of a slice together, each summed in slice order.
            for (uint s = 0u; s < ns; s++) {
                for (uint k = 0u; k < 4u; k++) {
                    a[k] += pc.part.v[base[k] + s * stride] * ws[((e + k) / hd) * MAXS + s];
                }
            }
#endif
            for (uint k = 0u; k < 4u; k++) {
                v[k] = a[k] * mls[2u * ((e + k) / hd) + 1u];
                pc.o.v[ooff + e + k] = v[k];
            }
        }
        if (pc.mode != 0u) {
            quant_word(tid, v, ooff + e, live, pc.mode, pc.q, pc.s); // uniform branch
        }
    }
}
