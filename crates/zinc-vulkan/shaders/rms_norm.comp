#version 450
// rms_norm.comp — RMSNorm in place over groups of columns, times a weight.
//
// Buffers (device addresses in the push constants):
//   x : Floats — rows × ncols activations, row-major f32, normalized in place; viewed as
//                ngroups = rows·ncols / group consecutive groups of `group` values
//   w : Floats — the `group` weights
// Push constants (std430, in order): Floats x; Floats w; uint ncols; uint group; float eps;
//   uint ngroups.  (ncols is informational: groups never straddle rows since group | ncols.)
// Specialization constant 0: WG, the workgroup size (default 128; 64..256, any value works).
// Dispatch: (min(ngroups, 65535), 1, ceil(ngroups / 65535)) workgroups; group g = wg_linear()
//   (groups past ngroups exit).
// x[g·group + j] = (x · inversesqrt(mean(x²) + eps)) · w[j], the sum of squares reduced through
// shared memory (the CPU backend sums in f64; this sums in f32).

#include "common.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats w;
    uint ncols;
    uint group;
    float eps;
    uint ngroups;
} pc;

shared float red[WG];
shared float red_lo[WG];

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
    red[tid] = hi;
    red_lo[tid] = lo;
    for (uint st = 1u; st < WG; st *= 2u) {
        barrier();
        if ((tid % (2u * st)) == 0u && tid + st < WG) {
            precise float a = red[tid];
            precise float b = red[tid + st];
            precise float s = a + b;
            precise float bp = s - a;
            precise float e = (a - (s - bp)) + (b - bp);
            red[tid] = s;
            red_lo[tid] = red_lo[tid] + red_lo[tid + st] + e;
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
        pc.x.v[base + j] = (pc.x.v[base + j] * scale) * pc.w.v[j];
    }
}
