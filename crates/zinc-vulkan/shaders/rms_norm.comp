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

void main() {
    uint g = wg_linear();
    if (g >= pc.ngroups) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint base = g * pc.group;

    float sum = 0.0;
    for (uint j = tid; j < pc.group; j += WG) {
        float v = pc.x.v[base + j];
        sum += v * v;
    }
    red[tid] = sum;
    for (uint s = 1u; s < WG; s *= 2u) {
        barrier();
        if ((tid % (2u * s)) == 0u && tid + s < WG) {
            red[tid] += red[tid + s];
        }
    }
    barrier();
    float mean = red[0] / float(pc.group);
    float scale = inversesqrt(mean + pc.eps);
    for (uint j = tid; j < pc.group; j += WG) {
        pc.x.v[base + j] = (pc.x.v[base + j] * scale) * pc.w.v[j];
    }
}
