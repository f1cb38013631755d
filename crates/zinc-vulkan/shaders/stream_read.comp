#version 450
#extension GL_EXT_control_flow_attributes : require
// stream_read.comp — timing only (`zinc matvec-cost`): reads a weight's bytes, 16 at a time,
// in as many workgroups of the same size as its decode mat-vec takes, and does nothing with
// them but fold them into a word that is stored only if it equals a value it practically
// never takes (so the loads stay). What one such dispatch costs after a barrier is the floor a
// mat-vec of those bytes cannot beat on the device; the mat-vec's own time above it is its
// arithmetic, reductions and the memory round trips it makes one after another.
//
// Buffers (device addresses in the push constants):
//   w : Quads — n16 16-byte units
//   y : Words — one word a workgroup, written only in the unlikely case above
// Push constants (std430, in order): Quads w; Words y; uint n16; uint groups.
// Specialization constants: 0 = WG, the workgroup size; 1 = U, loads an invocation has in
//   flight before it folds them (unrolled).
// Dispatch: `groups` workgroups, y/z-folded (wg_linear()); workgroup g reads units
//   g·c .. (g + 1)·c − 1 (c = ceil(n16 / groups)), WG·U at a time.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint U = 4;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Quads w;
    Words y;
    uint n16;
    uint groups;
} pc;

void main() {
    uint g = wg_linear();
    if (g >= pc.groups) {
        return;
    }
    uint tid = gl_LocalInvocationID.x;
    uint chunk = (pc.n16 + pc.groups - 1u) / pc.groups;
    uint lo = g * chunk;
    uint hi = min(lo + chunk, pc.n16);
    uvec4 acc = uvec4(0u);
    for (uint j0 = lo + tid; j0 < hi; j0 += WG * U) {
        uvec4 v[U];
        [[unroll]] for (uint k = 0u; k < U; k++) {
            uint j = j0 + k * WG;
            v[k] = j < hi ? pc.w.v[j] : uvec4(0u);
        }
        [[unroll]] for (uint k = 0u; k < U; k++) {
            acc ^= v[k];
        }
    }
    uint f = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (f == 0x9E3779B9u) {
        pc.y.v[g] = f;
    }
}
