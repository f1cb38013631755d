#version 450
// elementwise.comp — element-wise ops on f32 tensors, selected by `op`.
//
// Buffers (device addresses in the push constants; unused ones may be any address):
//   x : Floats — n values (modified in place by ops 0–3, read by 4–6)
//   y : Floats — second operand: n values (ops 1, 4, 5) or ncols values (op 3)
//   o : Floats — n outputs (ops 4–6)
// Push constants (std430, in order): Floats x; Floats y; Floats o; uint n; uint ncols; uint op;
//   float s.
// Specialization constant 0: WG, the workgroup size (default 256).
// Dispatch: 1-D over n invocations, z-folded: (min(G, 65535), 1, ceil(G / 65535)) workgroups,
//   G = ceil(n / WG); i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z · numWorkGroups.x · WG.
// Ops:  0 scale    x[i] *= s
//       1 add      x[i] += y[i]
//       2 softcap  x[i] = s·tanh(x[i] / s)
//       3 add_bias x[i] += y[i % ncols]
//       4 swiglu   o[i] = silu(x[i])·y[i],      silu(g) = g / (1 + exp(−g))
//       5 geglu    o[i] = gelu_tanh(x[i])·y[i], gelu_tanh(g) = 0.5g(1 + tanh(0.7978845608·g(1 + 0.044715g²)))
//       6 copy     o[i] = x[i]
// tanh is evaluated without overflow (±1 for |arg| ≥ 10, see safe_tanh) and exp overflow gives
// silu = −0, so no NaN arises for finite |x| ≤ 1e30. GELU reproduces the CPU backend (ggml's
// f16 table): the input is rounded to f16, the result rounded to f16, and x ≤ −10 → 0, x ≥ 10 → x.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats y;
    Floats o;
    Floats gelu_table; // 65,536 f32: GELU of every f16 value, indexed by its bits (op 5)
    uint n;
    uint ncols;
    uint op;
    float s;
} pc;

// tanh without overflow or cancellation (drivers often evaluate tanh as (e^x − e^−x)/(e^x + e^−x),
// which loses relative precision near 0 and can give inf/inf): the Cephes tanhf polynomial for
// |v| < 0.625, 1 − 2/(e^2|v| + 1) up to 10, and ±1 beyond (tanh(10) rounds to 1 in f32).
float safe_tanh(float v) {
    float a = abs(v);
    float r;
    if (a < 0.625) {
        float z = v * v;
        float p = ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z
                   + 1.33314422036e-1) * z - 3.33332819422e-1);
        return v + v * z * p;
    } else if (a < 10.0) {
        r = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    } else {
        r = 1.0;
    }
    return (v < 0.0) ? -r : r;
}

#include "act.glsl"

void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    if (i >= pc.n) {
        return;
    }
    switch (pc.op) {
    case 0u:
        pc.x.v[i] = pc.x.v[i] * pc.s;
        break;
    case 1u:
        pc.x.v[i] = pc.x.v[i] + pc.y.v[i];
        break;
    case 2u:
        pc.x.v[i] = pc.s * safe_tanh(pc.x.v[i] / pc.s);
        break;
    case 3u:
        pc.x.v[i] = pc.x.v[i] + pc.y.v[i % pc.ncols];
        break;
    case 4u:
        pc.o.v[i] = silu(pc.x.v[i]) * pc.y.v[i];
        break;
    case 5u:
        pc.o.v[i] = gelu(pc.gelu_table, pc.x.v[i]) * pc.y.v[i];
        break;
    case 6u:
        pc.o.v[i] = pc.x.v[i];
        break;
    default:
        break;
    }
}
