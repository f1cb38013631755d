#version 450
#ifdef SG_ON
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
// act_quant.comp — rounds activations the way the CPU backend (and llama.cpp) quantizes them
// before a quantized dot product, and writes the rounded values back as f32 ("fake
// quantization"). Mat-vec and mat-mul then multiply these by dequantized weights, so the GPU
// sees the same activations as the CPU oracle and greedy decoding follows it.
//
// Buffers (device addresses in the push constants):
//   x : Floats — n activations (rows of a multiple of the block size), row-major f32
//   o : Floats — n outputs, the rounded activations
// Push constants (std430, in order): Floats x; Floats o; uint n; uint mode; uint half_out — n
//   counts blocks (modes 1, 2) or elements (modes 3, 4; even for half_out); half_out = 1 writes o as
//   f16 (two to a word, as packHalf2x16 rounds: what the cooperative-matrix mat-mul multiplies).
// Modes (crates/zinc-backend/src/cpu/dot.rs, quantize_act):
//   1 Q8_0 / Q8_1: blocks of 32; d = amax/127 rounded to f16, q = roundEven(x·127/amax); o = d·q
//   2 Q8_K: blocks of 256; m = the value of largest |x| (first one), iscale = −127/m,
//           q = min(roundEven(iscale·x), 127); o = q / iscale
//   3 F16: o = x rounded to f16        4 BF16: o = x rounded to bf16 (nearest even)
// Specialization constant 0: WG, the workgroup size (default 64, a power of two).
// act_quant_sg (this file with SG_ON, build.rs): a block's largest magnitude found by subgroup
//   shuffles first and the subgroups' winners after one barrier, where the shared-memory tree
//   takes a barrier a level: the same element (the largest, the first of equals). A compiled
//   variant, not a specialization constant: the driver keeps a constant's dead branch.
// act_quant_glu (this file with GLU, build.rs; modes 1 and 2 only): x is a gated FFN's gate and
//   the block's values are act(gate) ⊙ up first (elementwise.comp's ops 4 and 5, act.glsl: the
//   same bits), written to f as f32 and rounded from shared memory: a prompt's activation and
//   its rounding for the down-projection in one dispatch. Push constants then: Floats x; Floats
//   o; Floats u; Floats f; Floats table; uint n; uint mode; uint half_out; uint gelu.
// Dispatch, 1-D and z-folded (wg_linear()): one workgroup per block (modes 1, 2: its threads
//   find the block's largest magnitude together, then round pairs each), or one per 2·WG
//   elements (modes 3, 4).

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats o;
#ifdef GLU
    Floats u;
    Floats f;
    Floats table;
#endif
    uint n;
    uint mode;
    uint half_out;
#ifdef GLU
    uint gelu;
#endif
} pc;

#ifdef GLU
#include "act.glsl"
shared float s_val[256];
// A block's values (base: its first element), computed once into shared memory.
#define XV(j) s_val[(j) - base]
#else
#define XV(j) pc.x.v[j]
#endif

// The rounded values of elements i and i + 1 into o (f32, or one f16 word).
void put2(uint i, float a, float b) {
    if (pc.half_out == 1u) {
        Words(pc.o).v[i / 2u] = packHalf2x16(vec2(a, b));
    } else {
        pc.o.v[i] = a;
        pc.o.v[i + 1u] = b;
    }
}

shared float s_abs[WG];
shared uint s_idx[WG];

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
    uint g = wg_linear();
    uint tid = gl_LocalInvocationID.x;
    if (pc.mode >= 3u) {
        uint i = 2u * (g * WG + tid);
        if (i + 1u < pc.n) {
            float a = pc.x.v[i], b = pc.x.v[i + 1u];
            if (pc.mode == 3u) {
                put2(i, round_f16(a), round_f16(b));
            } else {
                put2(i, round_bf16(a), round_bf16(b));
            }
        } else if (i < pc.n) {
            // An odd count's last element (f32 output only: f16 pairs need an even count).
            pc.o.v[i] = pc.mode == 3u ? round_f16(pc.x.v[i]) : round_bf16(pc.x.v[i]);
        }
        return;
    }
    if (g >= pc.n) {
        return; // uniform over the workgroup
    }
    uint bs = pc.mode == 1u ? 32u : 256u;
    uint base = g * bs;
#ifdef GLU
    for (uint i = tid; i < bs; i += WG) {
        float gv = pc.x.v[base + i];
        float v = (pc.gelu != 0u ? gelu(pc.table, gv) : silu(gv)) * pc.u.v[base + i];
        pc.f.v[base + i] = v;
        s_val[i] = v;
    }
    barrier();
#endif
    // The largest magnitude, and the first element that has it (Q8_K keeps its sign).
    float best = -1.0;
    uint at = 0u;
    for (uint i = tid; i < bs; i += WG) {
        float a = abs(XV(base + i));
        if (a > best) {
            best = a;
            at = i;
        }
    }
#ifdef SG_ON
    uint sgs = min(gl_SubgroupSize, WG);
    for (uint st = 1u; st < sgs; st *= 2u) {
        float a = subgroupShuffleXor(best, st);
        uint j = subgroupShuffleXor(at, st);
        if (a > best || (a == best && j < at)) {
            best = a;
            at = j;
        }
    }
    if (gl_SubgroupInvocationID == 0u) {
        s_abs[gl_SubgroupID] = best;
        s_idx[gl_SubgroupID] = at;
    }
    barrier();
    // Every invocation takes the winner of the subgroups' winners itself.
    best = s_abs[0];
    at = s_idx[0];
    for (uint k = 1u; k < gl_NumSubgroups; k++) {
        float a = s_abs[k];
        uint j = s_idx[k];
        if (a > best || (a == best && j < at)) {
            best = a;
            at = j;
        }
    }
#define WIN_ABS best
#define WIN_IDX at
#else
    s_abs[tid] = best;
    s_idx[tid] = at;
    for (uint st = WG / 2u; st > 0u; st >>= 1) {
        barrier();
        if (tid < st) {
            float a = s_abs[tid + st];
            uint j = s_idx[tid + st];
            if (a > s_abs[tid] || (a == s_abs[tid] && j < s_idx[tid])) {
                s_abs[tid] = a;
                s_idx[tid] = j;
            }
        }
    }
    barrier();
#define WIN_ABS s_abs[0]
#define WIN_IDX s_idx[0]
#endif
    float amax = max(WIN_ABS, 0.0);
    if (pc.mode == 1u) {
        float id = amax != 0.0 ? 127.0 / amax : 0.0;
        float d = round_f16(amax / 127.0);
        for (uint i = 2u * tid; i < bs; i += 2u * WG) {
            put2(base + i, d * roundEven(XV(base + i) * id),
                 d * roundEven(XV(base + i + 1u) * id));
        }
        return;
    }
    float m = XV(base + WIN_IDX);
    if (amax == 0.0) {
        for (uint i = 2u * tid; i < bs; i += 2u * WG) {
            put2(base + i, 0.0, 0.0);
        }
        return;
    }
    float iscale = -127.0 / m;
    float d = 1.0 / iscale;
    for (uint i = 2u * tid; i < bs; i += 2u * WG) {
        put2(base + i, d * min(roundEven(iscale * XV(base + i)), 127.0),
             d * min(roundEven(iscale * XV(base + i + 1u)), 127.0));
    }
}
