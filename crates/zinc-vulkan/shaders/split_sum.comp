#version 450
// split_sum.comp — split-K's partial products added up: y[i] (+)= part[i] + part[n + i] + … +
// part[(nsplit − 1)·n + i], in slab order (matmul_cm.glsl's kchunk), so the result does not
// depend on which workgroup finished first; with `add`, onto y's own value (a residual: y +
// (p₀ + p₁ + …), the numbers of the sum then elementwise.comp's add).
//
// Buffers (device addresses in the push constants):
//   part : Floats — nsplit slabs of n values
//   y    : Floats — n values
// Push constants (std430, in order): Floats part; Floats y; uint n; uint nsplit; uint add.
// Workgroup: 256 invocations, each 4 consecutive values (n a multiple of 4).
// Dispatch, 1-D and z-folded (wg_linear()): ceil(n / 1024) workgroups.

#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform PC {
    Floats part;
    Floats y;
    uint n;
    uint nsplit;
    uint add;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Floats4 { vec4 v[]; };

void main() {
    uint i = wg_linear() * 256u + gl_LocalInvocationID.x;
    uint n4 = pc.n / 4u;
    if (i >= n4) {
        return;
    }
    Floats4 p = Floats4(pc.part);
    Floats4 y = Floats4(pc.y);
    vec4 s = p.v[i];
    for (uint k = 1u; k < pc.nsplit; k++) {
        s += p.v[k * n4 + i];
    }
    y.v[i] = pc.add != 0u ? y.v[i] + s : s;
}
