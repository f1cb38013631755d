#version 450
// quant_act.comp — quantizes activations to 8-bit integers for the integer-dot mat-vec
// (matvecq.comp), exactly as the CPU backend and llama.cpp quantize them before a quantized dot
// product (crates/zinc-backend/src/cpu/dot.rs, quantize_act): the same q values, the same scales.
//
// Buffers (device addresses in the push constants):
//   x  : Floats — n activations, row-major f32 (rows a multiple of the block size)
//   q  : Words  — n signed bytes, four to a word (element i is byte i % 4 of word i / 4)
//   s  : Floats — per 32-element chunk c, four floats at 4c:
//                 [d, Σq of its first 16, Σq of its last 16, f16(d·Σq)]
//                 (d the chunk's scale: its own for Q8_0/Q8_1, its 256-block's for Q8_K)
// Push constants (std430, in order): Floats x; Words q; Floats s; uint n; uint mode.
// Modes:
//   1 Q8_0 / Q8_1: blocks of 32; d = amax/127 rounded to f16, q = roundEven(x·127/amax)
//   2 Q8_K: blocks of 256; m = the value of largest |x| (the first one), iscale = −127/m,
//           q = min(roundEven(iscale·x), 127), d = 1/iscale (all zero when m = 0)
// Workgroup: 64 invocations, fixed; each owns one word (4 elements) of a 256-element span.
// Dispatch, 1-D and z-folded (wg_linear()): ceil(n / 256) workgroups.

#include "common.glsl"

layout(local_size_x = 64) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Words q;
    Floats s;
    uint n;
    uint mode;
} pc;

shared float s_abs[64];
shared uint s_idx[64];
shared int s_sum[64];

float round_f16(float v) {
    return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
}

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
    // This word's largest magnitude and where it is (the first on ties).
    float best = abs(v.x);
    uint at = e0;
    for (uint k = 1u; k < 4u; k++) {
        if (abs(v[k]) > best) {
            best = abs(v[k]);
            at = e0 + k;
        }
    }
    s_abs[tid] = best;
    s_idx[tid] = at;
    // Reduce over 8 words (a 32-block) or all 64 (a 256-block); groups are aligned.
    uint span = pc.mode == 1u ? 8u : 64u;
    for (uint st = span / 2u; st > 0u; st >>= 1) {
        barrier();
        if ((tid % span) < st) {
            float a = s_abs[tid + st];
            uint j = s_idx[tid + st];
            if (a > s_abs[tid] || (a == s_abs[tid] && j < s_idx[tid])) {
                s_abs[tid] = a;
                s_idx[tid] = j;
            }
        }
    }
    barrier();
    uint lead = tid - tid % span;
    float amax = s_abs[lead];
    ivec4 qi = ivec4(0);
    float d = 0.0;
    if (pc.mode == 1u) {
        float id = amax != 0.0 ? 127.0 / amax : 0.0;
        d = round_f16(amax / 127.0);
        qi = ivec4(roundEven(v * id));
    } else if (amax != 0.0) {
        float m = pc.x.v[s_idx[lead]];
        float iscale = -127.0 / m;
        d = 1.0 / iscale;
        qi = ivec4(min(roundEven(iscale * v), vec4(127.0)));
    }
    if (live) {
        pc.q.v[e0 / 4u] = uint(qi.x & 255) | (uint(qi.y & 255) << 8) | (uint(qi.z & 255) << 16)
            | (uint(qi.w & 255) << 24);
    }
    // Sums over 16 elements (4 words), then one writer per 32-element chunk.
    s_sum[tid] = qi.x + qi.y + qi.z + qi.w;
    barrier();
    if (live && tid % 8u == 0u) {
        int s0 = s_sum[tid] + s_sum[tid + 1u] + s_sum[tid + 2u] + s_sum[tid + 3u];
        int s1 = s_sum[tid + 4u] + s_sum[tid + 5u] + s_sum[tid + 6u] + s_sum[tid + 7u];
        uint c = e0 / 32u;
        pc.s.v[4u * c] = d;
        pc.s.v[4u * c + 1u] = float(s0);
        pc.s.v[4u * c + 2u] = float(s1);
        pc.s.v[4u * c + 3u] = round_f16(d * float(s0 + s1));
    }
}
