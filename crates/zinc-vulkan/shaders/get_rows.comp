#version 450
// get_rows.comp — embedding lookup: y[t] = dequant(table row ids[t]) · scale (per format).
//
// Buffers (device addresses in the push constants):
//   w   : Words  — the table, rows of row_bytes bytes in the GGML block layout of TYPE_<FMT>
//   ids : Words  — ntok row indices (u32)
//   y   : Floats — ntok × ncols outputs, row-major f32
// Push constants (std430, in order): Words w; Words ids; Floats y; uint ncols; uint row_bytes;
//   uint ntok; float scale.
// Specialization constant 0: WG, the workgroup size (default 64).
// Dispatch: (ntok, ceil(ncols / SPAN), 1) workgroups; workgroup (t, s) writes columns
//   s·SPAN .. (s + 1)·SPAN − 1 of row t, its invocations striding over them:
//   y[t·ncols + c] = dequant(w, ids[t]·row_bytes, c) · scale. (One workgroup a row walked a
//   4,096-wide Q4_K row block by block, a memory round trip each: 23 µs of a decode step on
//   the H200.)

#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;
// Columns a workgroup (a 256-element block of the K-quants).
const uint SPAN = 256u;

layout(push_constant, std430) uniform PC {
    Words w;
    Words ids;
    Floats y;
    uint ncols;
    uint row_bytes;
    uint ntok;
    float scale;
} pc;

void main() {
    uint t = gl_WorkGroupID.x;
    if (t >= pc.ntok) {
        return;
    }
    uint row_byte = pc.ids.v[t] * pc.row_bytes;
    uint c0 = gl_WorkGroupID.y * SPAN;
    uint c1 = min(pc.ncols, c0 + SPAN);
    for (uint c = c0 + gl_LocalInvocationID.x; c < c1; c += WG) {
        pc.y.v[t * pc.ncols + c] = dequant(pc.w, row_byte, c) * pc.scale;
    }
}
