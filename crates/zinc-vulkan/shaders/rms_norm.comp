#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
// rms_norm.comp — RMSNorm over groups of columns, times a weight, in place or into another
// buffer.
//
// Buffers (device addresses in the push constants):
//   x : Floats — rows × ncols activations, row-major f32; viewed as ngroups = rows·ncols / group
//                consecutive groups of `group` values
//   w : Floats — the `group` weights
//   o : Floats — the output, same layout as x (o = x: in place)
// Push constants (std430, in order): Floats x; Floats w; Floats o; uint ncols; uint group;
//   float eps; uint ngroups.  (ncols is informational: groups never straddle rows since
//   group | ncols.)
// Specialization constants: 0 = WG, the workgroup size (default 128; a power of two ≤ 1024);
//   1 = SG, 1 to reduce within subgroups by shuffles first (else shared memory only).
// Dispatch: (min(ngroups, 65535), 1, ceil(ngroups / 65535)) workgroups; group g = wg_linear()
//   (groups past ngroups exit).
// o[g·group + j] = (x · inversesqrt(mean(x²) + eps)) · w[j], the sum of squares carried as a
// double-float (see below).

#include "common.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint SG = 1;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats w;
    Floats o;
    uint ncols;
    uint group;
    float eps;
    uint ngroups;
} pc;

shared float red[WG];
shared float red_lo[WG];

// (hi, lo) += (b, b_lo) as double-floats (an error-free two-sum of the high parts).
void two_sum_into(inout float hi, inout float lo, float b, float b_lo) {
    precise float a = hi;
    precise float s = a + b;
    precise float bp = s - a;
    precise float e = (a - (s - bp)) + (b - bp);
    hi = s;
    lo = lo + b_lo + e;
}

void main() {
    uint g = wg_linear();
    if (g >= pc.ngroups) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint base = g * pc.group;

    // Σ x² as a double-float (hi + lo, error-free two-sums): the CPU backend sums the f32
    // squares in f64, and this gets the same mean to the last bit in practice, without needing
    // shaderFloat64 (Intel Arc has none). `precise` keeps the compiler from fusing or reordering.
    precise float hi = 0.0;
    precise float lo = 0.0;
    for (uint j = tid; j < pc.group; j += WG) {
        float v = pc.x.v[base + j];
        precise float p = v * v;
        precise float s = hi + p;
        precise float bp = s - hi;
        lo += (hi - (s - bp)) + (p - bp);
        hi = s;
    }
    // Within subgroups first (no barriers), then the subgroup leaders through shared memory.
    uint stride = 1u;
    if (SG == 1u) {
        uint sgs = min(gl_SubgroupSize, WG);
        for (uint st = 1u; st < sgs; st *= 2u) {
            float bh = subgroupShuffleXor(hi, st);
            float bl = subgroupShuffleXor(lo, st);
            // Both partners add the same pair, in an order that does not depend on which is
            // which: the lower lane's value first.
            bool first = (gl_SubgroupInvocationID & st) == 0u;
            float ah = first ? hi : bh, al = first ? lo : bl;
            float ch = first ? bh : hi, cl = first ? bl : lo;
            hi = ah;
            lo = al;
            two_sum_into(hi, lo, ch, cl);
        }
        stride = sgs;
    }
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
    // mean = (hi + lo) / n rounded once, as (f64 sum / n) as f32 is.
    precise float n = float(pc.group);
    precise float q = red[0] / n;
    precise float r = fma(-q, n, red[0]) + red_lo[0];
    precise float mean = q + r / n;
    precise float scale = 1.0 / sqrt(mean + pc.eps);
    for (uint j = tid; j < pc.group; j += WG) {
        pc.o.v[base + j] = (pc.x.v[base + j] * scale) * pc.w.v[j];
    }
}
