#version 450
// gather.comp — copies a column range of selected rows (split_cols and select_rows).
//
// Buffers (device addresses in the push constants):
//   x    : Floats — source rows of src_ncols values, row-major f32
//   y    : Floats — nrows × dst_ncols outputs, row-major f32
//   rows : Words  — nrows source row indices (u32), read only when use_rows != 0
// Push constants (std430, in order): Floats x; Floats y; Words rows; uint src_ncols; uint col0;
//   uint dst_ncols; uint nrows; uint use_rows.
// Specialization constant 0: WG, the workgroup size (default 256).
// Dispatch: 1-D over nrows · dst_ncols invocations, z-folded: (min(G, 65535), 1, ceil(G / 65535))
//   workgroups, G = ceil(nrows·dst_ncols / WG); id = gl_GlobalInvocationID.x
//   + gl_GlobalInvocationID.z · numWorkGroups.x · WG.
// y[i·dst_ncols + c] = x[src_row·src_ncols + col0 + c], src_row = use_rows != 0 ? rows[i] : i.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats y;
    Words rows;
    uint src_ncols;
    uint col0;
    uint dst_ncols;
    uint nrows;
    uint use_rows;
} pc;

void main() {
    uint id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    if (pc.dst_ncols == 0u || id >= pc.nrows * pc.dst_ncols) {
        return;
    }
    uint i = id / pc.dst_ncols;
    uint c = id % pc.dst_ncols;
    uint src_row = (pc.use_rows != 0u) ? pc.rows.v[i] : i;
    pc.y.v[id] = pc.x.v[src_row * pc.src_ncols + pc.col0 + c];
}
