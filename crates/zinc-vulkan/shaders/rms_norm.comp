#version 450
#extension GL_EXT_control_flow_attributes : require
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
// double-float (rms.glsl).

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

#include "rms.glsl"

void main() {
    uint g = wg_linear();
    if (g >= pc.ngroups) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint base = g * pc.group;

    float scale = rms_scale(pc.x, base, pc.group, pc.eps);
    for (uint j = tid; j < pc.group; j += WG) {
        pc.o.v[base + j] = (pc.x.v[base + j] * scale) * pc.w.v[j];
    }
}
