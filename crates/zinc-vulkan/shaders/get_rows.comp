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
// Dispatch: (ntok, 1, 1) workgroups; workgroup t writes row t, its invocations striding over c:
//   y[t·ncols + c] = dequant(w, ids[t]·row_bytes, c) · scale.

#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

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
    for (uint c = gl_LocalInvocationID.x; c < pc.ncols; c += WG) {
        pc.y.v[t * pc.ncols + c] = dequant(pc.w, row_byte, c) * pc.scale;
    }
}
