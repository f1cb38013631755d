#version 450
// moe_combine.comp — weighted sum of the k expert outputs of each token.
//
// Buffers (device addresses in the push constants):
//   y   : Floats — ntok·k expert outputs of ncols values, row-major f32 (slot t·k + j)
//   wts : Floats — ntok × k routing weights
//   o   : Floats — ntok × ncols outputs, row-major f32 (with accumulate: the residual stream,
//                  added to in place)
// Push constants (std430, in order): Floats y; Floats wts; Floats o; uint ncols; uint k; uint ntok;
//   uint accumulate.
// Specialization constant 0: WG, the workgroup size (default 256).
// Dispatch: 1-D over ntok · ncols invocations, z-folded: (min(G, 65535), 1, ceil(G / 65535))
//   workgroups, G = ceil(ntok·ncols / WG); i = gl_GlobalInvocationID.x
//   + gl_GlobalInvocationID.z · numWorkGroups.x · WG.
// o[t·ncols + c] = Σ_j wts[t·k + j] · y[(t·k + j)·ncols + c], summed in j order from 0, then
// (accumulate != 0) o's old value + that sum: the numbers of a separate add.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats y;
    Floats wts;
    Floats o;
    uint ncols;
    uint k;
    uint ntok;
    uint accumulate;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    if (pc.ncols == 0u || i >= pc.ntok * pc.ncols) {
        return;
    }
    uint t = i / pc.ncols;
    uint c = i % pc.ncols;
    float acc = 0.0;
    for (uint j = 0u; j < pc.k; j++) {
        uint slot = t * pc.k + j;
        acc += pc.wts.v[slot] * pc.y.v[slot * pc.ncols + c];
    }
    pc.o.v[i] = pc.accumulate != 0u ? pc.o.v[i] + acc : acc;
}
