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
// rms_norm_round (this file with ROUND, build.rs): the group's outputs also rounded as
//   act_quant.comp rounds them (modes 1 and 2, f32 or f16 pairs: the same formulas, the same
//   element as the largest magnitude, the first of equals), into r, from shared memory: a
//   prompt's pre-norm and the rounding its projections read in one dispatch. Push constants
//   then: Floats x; Floats w; Floats o; Floats r; uint ncols; uint group; float eps;
//   uint ngroups; uint mode; uint half_out. Specialization constant 2 = GMAX, the group size
//   (its copy in shared memory). The host takes it with SG = 1 and a whole number of blocks a
//   group.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint SG = 1;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats w;
    Floats o;
#ifdef ROUND
    Floats r;
#endif
    uint ncols;
    uint group;
    float eps;
    uint ngroups;
#ifdef ROUND
    uint mode;
    uint half_out;
#endif
} pc;

#ifdef ROUND
// 2 = GMAX: the group size (the shared copy's length).
layout(constant_id = 2) const uint GMAX = 4096;
shared float s_val[GMAX];

float round_f16(float v) {
    return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
}

// The rounded values of elements i and i + 1 into r (f32, or one f16 word).
void put2(uint i, float a, float b) {
    if (pc.half_out == 1u) {
        Words(pc.r).v[i / 2u] = packHalf2x16(vec2(a, b));
    } else {
        pc.r.v[i] = a;
        pc.r.v[i + 1u] = b;
    }
}
#endif

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
#ifdef ROUND
        float v = (pc.x.v[base + j] * scale) * pc.w.v[j];
        pc.o.v[base + j] = v;
        s_val[j] = v;
#else
        pc.o.v[base + j] = (pc.x.v[base + j] * scale) * pc.w.v[j];
#endif
    }
#ifdef ROUND
    barrier();
    // A block a subgroup at a time: its largest magnitude and the first element that has it
    // (each lane's own in index order, then pairs by shuffles), then act_quant's rounding.
    uint bs = pc.mode == 1u ? 32u : 256u;
    uint sgs = gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    for (uint b = gl_SubgroupID; b < pc.group / bs; b += gl_NumSubgroups) {
        uint b0 = b * bs;
        float best = -1.0;
        uint at = 0u;
        for (uint i = lane; i < bs; i += sgs) {
            float a = abs(s_val[b0 + i]);
            if (a > best) {
                best = a;
                at = i;
            }
        }
        for (uint st = 1u; st < sgs; st *= 2u) {
            float a = subgroupShuffleXor(best, st);
            uint j = subgroupShuffleXor(at, st);
            if (a > best || (a == best && j < at)) {
                best = a;
                at = j;
            }
        }
        float amax = max(best, 0.0);
        uint ob = base + b0;
        if (pc.mode == 1u) {
            float id = amax != 0.0 ? 127.0 / amax : 0.0;
            float d = round_f16(amax / 127.0);
            for (uint i = 2u * lane; i < bs; i += 2u * sgs) {
                put2(ob + i, d * roundEven(s_val[b0 + i] * id), d * roundEven(s_val[b0 + i + 1u] * id));
            }
            continue;
        }
        float m = s_val[b0 + at];
        if (amax == 0.0) {
            for (uint i = 2u * lane; i < bs; i += 2u * sgs) {
                put2(ob + i, 0.0, 0.0);
            }
            continue;
        }
        float iscale = -127.0 / m;
        float d = 1.0 / iscale;
        for (uint i = 2u * lane; i < bs; i += 2u * sgs) {
            put2(ob + i, d * min(roundEven(iscale * s_val[b0 + i]), 127.0),
                 d * min(roundEven(iscale * s_val[b0 + i + 1u]), 127.0));
        }
    }
#endif
}
