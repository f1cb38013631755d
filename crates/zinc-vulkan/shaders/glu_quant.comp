#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// glu_quant.comp — a gated activation, act(gate) ⊙ up (elementwise.comp's ops 4 and 5, act.glsl),
// that also quantizes its output for the integer-dot mat-vec that reads it next (quant8.glsl):
// one dispatch where the activation and quant_act take two.
//
// Buffers (device addresses in the push constants):
//   g, u  : Floats — n gate and up values
//   o     : Floats — the n products
//   table : Floats — GELU's f16 table (act.glsl)
//   q, s         — o quantized (quant8.glsl's layout)
// Push constants (std430, in order): Floats g; Floats u; Floats o; Floats table; Words q;
//   Floats s; uint n; uint gelu (0: SiLU, 1: GELU); uint mode (1 Q8_0/Q8_1: n a multiple of 32;
//   2 Q8_K: rows of a multiple of 256).
// Workgroup: 64 invocations, fixed; each owns one word (4 elements) of a 256-element span.
// Dispatch, 1-D and z-folded (wg_linear()): ceil(n / 256) workgroups.

#include "common.glsl"

const uint WG = 64u;
layout(local_size_x = 64) in;

layout(push_constant, std430) uniform PC {
    Floats g;
    Floats u;
    Floats o;
    Floats table;
    Words q;
    Floats s;
    uint n;
    uint gelu;
    uint mode;
} pc;

#include "act.glsl"
#include "quant8.glsl"

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint base = wg_linear() * 256u;
    if (base >= pc.n) {
        return; // uniform over the workgroup
    }
    uint e0 = base + 4u * tid;
    bool live = e0 < pc.n;
    vec4 v = vec4(0.0);
    if (live) {
        for (uint k = 0u; k < 4u; k++) {
            float gv = pc.g.v[e0 + k];
            float a = pc.gelu == 1u ? gelu(pc.table, gv) : silu(gv);
            v[k] = a * pc.u.v[e0 + k];
            pc.o.v[e0 + k] = v[k];
        }
    }
    quant_word(tid, v, e0, live, pc.mode, pc.q, pc.s);
}
