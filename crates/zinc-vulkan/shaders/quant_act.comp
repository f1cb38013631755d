#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// quant_act.comp — quantizes activations to 8-bit integers for the integer-dot mat-vec
// (matvecq.comp); the arithmetic and output layout are quant8.glsl's.
//
// Buffers (device addresses in the push constants):
//   x  : Floats — n activations, row-major f32 (rows a multiple of the block size)
//   q  : Words  — n signed bytes (quant8.glsl)
//   s  : Floats — per 32-element chunk, four floats (quant8.glsl)
// Push constants (std430, in order): Floats x; Words q; Floats s; uint n; uint mode
//   (1 Q8_0/Q8_1, 2 Q8_K).
// Workgroup: 64 invocations, fixed; each owns one word (4 elements) of a 256-element span.
// Dispatch, 1-D and z-folded (wg_linear()): ceil(n / 256) workgroups.

#include "common.glsl"

const uint WG = 64u;
layout(local_size_x = 64) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Words q;
    Floats s;
    uint n;
    uint mode;
} pc;

#include "quant8.glsl"

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint base = wg_linear() * 256u;
    if (base >= pc.n) {
        return; // uniform over the workgroup
    }
    uint e0 = base + 4u * tid;
    bool live = e0 < pc.n; // n is a multiple of 32: a word is wholly in or out
    vec4 v = vec4(0.0);
    if (live) {
        v = vec4(pc.x.v[e0], pc.x.v[e0 + 1u], pc.x.v[e0 + 2u], pc.x.v[e0 + 3u]);
    }
    quant_word(tid, v, e0, live, pc.mode, pc.q, pc.s);
}
