// common.glsl — shared declarations of every ZINC Vulkan compute shader.
//
// Included textually by build.rs (the line `#include "common.glsl"` is replaced by this file),
// right after `#version 450` (and the `#define TYPE_<FMT> 1` of per-format shaders).
//
// Buffers are never bound through descriptor sets: each one is a GL_EXT_buffer_reference (a
// 64-bit device address) passed in the push-constant block. Two views exist:
//   Floats — an array of f32 (activations, norm weights, scales, attention partials)
//   Words  — an array of u32 (quantized weights, f16 KV cache pairs, token ids, positions)
// No 8/16-bit storage is used: bytes and halves are extracted from u32 words (little endian)
// with the rd_* helpers below. Byte offsets are uint (every buffer is < 4 GiB).

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_control_flow_attributes : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words  { uint  v[]; };
// The same memory as 16-byte vectors, for reads known to be 16-byte aligned (Quads(w) views a
// Words buffer w; element i covers bytes 16i .. 16i + 15).
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Quads { uvec4 v[]; };

// Byte `byte` of a Words buffer.
uint rd_u8(Words b, uint byte) {
    return (b.v[byte >> 2] >> ((byte & 3u) * 8u)) & 0xFFu;
}

// The little-endian u16 at `byte` (even: never straddles a word).
uint rd_u16(Words b, uint byte) {
    return (b.v[byte >> 2] >> ((byte & 2u) * 8u)) & 0xFFFFu;
}

// The little-endian u32 at `byte` (even; may straddle two words: read as two u16).
uint rd_u32(Words b, uint byte) {
    if ((byte & 3u) == 0u) {
        return b.v[byte >> 2];
    }
    return rd_u16(b, byte) | (rd_u16(b, byte + 2u) << 16);
}

// Byte `byte` as a signed 8-bit integer.
int rd_i8(Words b, uint byte) {
    return bitfieldExtract(int(b.v[byte >> 2]), int((byte & 3u) * 8u), 8);
}

// IEEE binary16 bits → f32, exactly (the value unpackHalf2x16 gives), decoded with integer ops
// so that f16 subnormals (tiny block scales) survive on devices that flush denormal inputs.
float f16_bits_to_f32(uint h) {
    uint s = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1Fu;
    uint m = h & 0x3FFu;
    if (e == 0u) {
        // Subnormal or zero: m·2^-24 is a normal f32 (or zero), exact.
        float f = float(m) * 5.9604644775390625e-8;
        return (s != 0u) ? -f : f;
    }
    if (e == 31u) {
        return uintBitsToFloat(s | 0x7F800000u | (m << 13));
    }
    return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}

// The f16 at `byte` (even) as f32.
float rd_f16(Words b, uint byte) {
    return f16_bits_to_f32(rd_u16(b, byte));
}

// The bf16 at `byte` (even) as f32 (exact: the bits move to the top half).
float rd_bf16(Words b, uint byte) {
    return uintBitsToFloat(rd_u16(b, byte) << 16);
}

// CLK_MARK(i): in the clocked variants (clock.glsl), the workgroup's first invocation notes the
// SM's clock as mark i (0–7) of the workgroup's record; elsewhere nothing. A mark says when that
// invocation got there, not when loads issued before it completed: marks go after the barrier
// or the arithmetic that waits for them.
#ifdef CLK_ON
#define CLK_MARKS 8u
shared uint clk_m[CLK_MARKS];
#define CLK_MARK(i) if (gl_LocalInvocationIndex == 0u) { clk_m[i] = clock2x32ARB().x; }
#else
#define CLK_MARK(i)
#endif

// A linear workgroup index for 1-D grids larger than 65535 workgroups: the host dispatches
// (x ≤ 65535, 1, z) and the index is x + z·(workgroups along x). Callers check the bound.
uint wg_linear() {
    return gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x;
}
