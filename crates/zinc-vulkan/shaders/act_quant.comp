#version 450
// act_quant.comp — rounds activations the way the CPU backend (and llama.cpp) quantizes them
// before a quantized dot product, and writes the rounded values back as f32 ("fake
// quantization"). Mat-vec and mat-mul then multiply these by dequantized weights, so the GPU
// sees the same activations as the CPU oracle and greedy decoding follows it.
//
// Buffers (device addresses in the push constants):
//   x : Floats — n activations (rows of a multiple of the block size), row-major f32
//   o : Floats — n outputs, the rounded activations
// Push constants (std430, in order): Floats x; Floats o; uint nblocks; uint mode.
// Modes (crates/zinc-backend/src/cpu/dot.rs, quantize_act):
//   1 Q8_0 / Q8_1: blocks of 32; d = amax/127 rounded to f16, q = roundEven(x·127/amax); o = d·q
//   2 Q8_K: blocks of 256; m = the value of largest |x| (first one), iscale = −127/m,
//           q = min(roundEven(iscale·x), 127); o = q / iscale
//   3 F16: o = x rounded to f16        4 BF16: o = x rounded to bf16 (nearest even)
// Specialization constant 0: WG, the workgroup size (default 64).
// Dispatch: one invocation per block (modes 1, 2) or per element (3, 4), 1-D, z-folded:
//   gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z · gl_NumWorkGroups.x · WG.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats o;
    uint nblocks;
    uint mode;
} pc;

float round_f16(float v) {
    return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
}

float round_bf16(float v) {
    uint b = floatBitsToUint(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return uintBitsToFloat((b | 0x00400000u) & 0xffff0000u); // NaN stays NaN
    }
    b += 0x7fffu + ((b >> 16) & 1u);
    return uintBitsToFloat(b & 0xffff0000u);
}

void main() {
    uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    if (gid >= pc.nblocks) {
        return;
    }
    if (pc.mode == 3u) {
        pc.o.v[gid] = round_f16(pc.x.v[gid]);
        return;
    }
    if (pc.mode == 4u) {
        pc.o.v[gid] = round_bf16(pc.x.v[gid]);
        return;
    }
    if (pc.mode == 1u) {
        uint base = gid * 32u;
        float amax = 0.0;
        for (uint i = 0u; i < 32u; i++) {
            amax = max(amax, abs(pc.x.v[base + i]));
        }
        float id = amax != 0.0 ? 127.0 / amax : 0.0;
        float d = round_f16(amax / 127.0);
        for (uint i = 0u; i < 32u; i++) {
            pc.o.v[base + i] = d * roundEven(pc.x.v[base + i] * id);
        }
        return;
    }
    // Q8_K: the block's value of largest magnitude (the first one on ties), then the rounding.
    uint base = gid * 256u;
    float m = 0.0;
    for (uint i = 0u; i < 256u; i++) {
        float v = pc.x.v[base + i];
        if (abs(v) > abs(m)) {
            m = v;
        }
    }
    if (m == 0.0) {
        for (uint i = 0u; i < 256u; i++) {
            pc.o.v[base + i] = 0.0;
        }
        return;
    }
    float iscale = -127.0 / m;
    float d = 1.0 / iscale;
    for (uint i = 0u; i < 256u; i++) {
        pc.o.v[base + i] = d * min(roundEven(iscale * pc.x.v[base + i]), 127.0);
    }
}
