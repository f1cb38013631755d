// rms.glsl — the RMSNorm scale of a group of values, shared by rms_norm.comp, norm_quant.comp
// and qk_prep.comp so that all of them compute it to the same bit.
//
// The includer declares WG (its workgroup size, a power of two) and SG (1: reduce within
// subgroups by shuffles first) before including this file, and enables
// GL_KHR_shader_subgroup_shuffle and GL_EXT_control_flow_attributes.

// (8 on the H200: 32 measured no faster.)
const uint RMS_BATCH = 8u;

shared float red[WG];
shared float red_lo[WG];

#define DFLOAT_SHUFFLE 1
#include "dfloat.glsl"

// 1 / sqrt(mean(x²) + eps) over x.v[base .. base + n), called by every invocation of the
// workgroup (it holds barriers); once per workgroup.
//
// Σ x² is carried as a double-float (hi + lo, error-free two-sums): the CPU backend sums the f32
// squares in f64, and this gets the same mean to the last bit in practice, without needing
// shaderFloat64 (Intel Arc has none). `precise` keeps the compiler from fusing or reordering.
float rms_scale(Floats x, uint base, uint n, float eps) {
    uint tid = gl_LocalInvocationID.x;
    precise float hi = 0.0;
    precise float lo = 0.0;
    // RMS_BATCH loads are issued before their sums (a decode row is 4,096 values: one at a
    // time, each waited for, cost more than the arithmetic). Every invocation still adds its
    // values j = tid, tid + WG, … in that order, and a missing value is an exact no-op (0 added
    // to a two-sum changes neither part), so every includer agrees to the bit as before.
    for (uint j0 = tid; j0 < n; j0 += RMS_BATCH * WG) {
        float vs[RMS_BATCH];
        [[unroll]] for (uint k = 0u; k < RMS_BATCH; k++) {
            uint j = j0 + k * WG;
            vs[k] = j < n ? x.v[base + j] : 0.0;
        }
        [[unroll]] for (uint k = 0u; k < RMS_BATCH; k++) {
            add_square(hi, lo, vs[k]);
        }
    }
    // Within subgroups first (no barriers), then the subgroup leaders through shared memory.
    uint stride = 1u;
    if (SG == 1u) {
        uint sgs = min(gl_SubgroupSize, WG);
        for (uint st = 1u; st < sgs; st *= 2u) {
            // Both partners add the same pair, in an order that does not depend on which is
            // which: the lower lane's value first.
            two_sum_pair(hi, lo, st, (gl_SubgroupInvocationID & st) == 0u);
        }
        stride = sgs;
    }
    // Then the subgroups' sums, in the same pairs a tree over them takes (so the same bits): where
    // there are no more of them than a subgroup has lanes, their leaders store them and every
    // subgroup reads them all and pairs them by shuffles (one barrier); otherwise a tree in shared
    // memory (a barrier a level).
    uint leaders = WG / stride;
    if (SG == 1u && leaders <= gl_SubgroupSize) {
        if (leaders > 1u) {
            if (gl_SubgroupInvocationID == 0u) {
                red[tid / stride] = hi;
                red_lo[tid / stride] = lo;
            }
            barrier();
            // Every run of `leaders` lanes holds all the sums and pairs them alike: every lane
            // ends with the total.
            uint l = gl_SubgroupInvocationID % leaders;
            hi = red[l];
            lo = red_lo[l];
            for (uint st = 1u; st < leaders; st *= 2u) {
                two_sum_pair(hi, lo, st, (l & st) == 0u);
            }
        }
    } else {
        red[tid] = hi;
        red_lo[tid] = lo;
        for (uint st = stride; st < WG; st *= 2u) {
            barrier();
            if ((tid % (2u * st)) == 0u && tid + st < WG) {
                float h2 = red[tid], l2 = red_lo[tid];
                two_sum_into(h2, l2, red[tid + st], red_lo[tid + st]);
                red[tid] = h2;
                red_lo[tid] = l2;
            }
        }
        barrier();
        hi = red[0];
        lo = red_lo[0];
    }
    return mean_scale(hi, lo, n, eps);
}
