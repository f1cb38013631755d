#version 450
// moe_matvec.comp — per-slot expert matvec of a mixture-of-experts layer (per format).
//
// Buffers (device addresses in the push constants):
//   w     : Words  — all experts' weights: expert e at byte e·expert_bytes, nrows rows of
//                    row_bytes bytes each, in the GGML block layout of TYPE_<FMT> (dequant.glsl)
//   x     : Floats — input rows of ncols values, row-major f32: one per token
//                    (x_per_slot = 0) or one per slot (x_per_slot != 0)
//   y     : Floats — nslots × nrows outputs, row-major f32 (y[s·nrows + r])
//   ids   : Words  — nslots expert ids (u32); slot s = t·k + j is pick j of token t
//   scale : Floats — per-expert output scales, read only when has_scale != 0
// Push constants (std430, in order): Words w; Floats x; Floats y; Words ids; Floats scale;
//   uint ncols; uint nrows; uint row_bytes; uint expert_bytes; uint nslots; uint k;
//   uint x_per_slot; uint has_scale; uint row0 (the first row of each expert used: a fused
//   gate/up tensor's up half starts at row n_ff).
// Specialization constant 0: WG, the workgroup size (default 64; any value ≥ 1).
// Dispatch: (min(nrows, 65535), nslots, ceil(nrows / 65535)) workgroups: row r = wg_linear()
//   (rows past nrows exit), slot s = gl_WorkGroupID.y.
// e = ids[s]; xrow = x_per_slot != 0 ? s : s / k;
// y[s·nrows + r] = (Σ_c dequant(w, e·expert_bytes + (row0 + r)·row_bytes, c) · x[xrow·ncols + c])
//                  · (has_scale != 0 ? scale[e] : 1), reduced through shared memory.

#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Floats x;
    Floats y;
    Words ids;
    Floats scale;
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint expert_bytes;
    uint nslots;
    uint k;
    uint x_per_slot;
    uint has_scale;
    uint row0;
} pc;

shared float red[WG];

void main() {
    uint r = wg_linear();
    uint s = gl_WorkGroupID.y;
    if (r >= pc.nrows || s >= pc.nslots) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint e = pc.ids.v[s];
    uint row_byte = e * pc.expert_bytes + (pc.row0 + r) * pc.row_bytes;
    uint xrow = (pc.x_per_slot != 0u) ? s : s / pc.k;
    uint xo = xrow * pc.ncols;

    float sum = 0.0;
    for (uint c = tid; c < pc.ncols; c += WG) {
        sum += dequant(pc.w, row_byte, c) * pc.x.v[xo + c];
    }
    red[tid] = sum;
    for (uint st = 1u; st < WG; st *= 2u) {
        barrier();
        if ((tid % (2u * st)) == 0u && tid + st < WG) {
            red[tid] += red[tid + st];
        }
    }
    if (tid == 0u) {
        float v = red[0];
        if (pc.has_scale != 0u) {
            v *= pc.scale.v[e];
        }
        pc.y.v[s * pc.nrows + r] = v;
    }
}
