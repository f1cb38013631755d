#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_spirv_intrinsics : require
// moe_matvecq.comp — moe_matvec.comp on integer dot products (per format): each slot's expert
// rows times its 8-bit-quantized input, as matvecq.comp multiplies (dotq.glsl's unit_dot), so
// the products are the CPU's.
//
// Buffers (device addresses in the push constants):
//   w     : Words  — all experts' weights: expert e at byte e·expert_bytes, rows of row_bytes
//   xq    : Words  — input rows quantized by quant_act.comp (one per token, or per slot)
//   xs    : Floats — their per-32-element chunk floats (quant_act.comp)
//   y     : Floats — nslots × nrows outputs, row-major f32
//   ids   : Words  — nslots expert ids (u32); slot s = t·k + j is pick j of token t
//   scale : Floats — per-expert output scales, read only when has_scale != 0
// Push constants (std430, in order): Words w; Words xq; Floats xs; Floats y; Words ids;
//   Floats scale; uint ncols; uint nrows; uint row_bytes; uint expert_bytes; uint nslots;
//   uint k; uint x_per_slot; uint has_scale; uint row0 (as moe_matvec.comp).
// Specialization constants: 0 = WG (default 128); 1 = TPR, threads per row (a power of two
//   dividing WG).
// Dispatch: (nslots, min(G, 65535), ceil(G / 65535)) with G = ceil(nrows / (WG / TPR)): the
//   slot is gl_WorkGroupID.x, the row group y + z·65535.
// e = ids[s]; xrow = x_per_slot != 0 ? s : s / k; y[s·nrows + r] = (row0 + r of expert e) ·
// x[xrow] · (has_scale != 0 ? scale[e] : 1).

#include "common.glsl"
#include "dequant.glsl"
#include "dotq.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TPR = 16;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Words xq;
    Floats xs;
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

// The lanes of a row sum `v` (matvecq.comp's reduction).
float row_sum(float v, uint tid, uint lane) {
    if (TPR == 1u) {
        return v;
    }
    if (gl_SubgroupSize >= TPR) {
        [[unroll]] for (uint s = TPR / 2u; s > 0u; s >>= 1) {
            v += subgroupShuffleXor(v, s);
        }
        return v;
    }
    red[tid] = v;
    for (uint s = TPR / 2u; s > 0u; s >>= 1) {
        barrier();
        if (lane < s) {
            red[tid] += red[tid + s];
        }
    }
    barrier();
    return red[tid];
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint lane = tid % TPR;
    uint s = gl_WorkGroupID.x;
    uint r = (gl_WorkGroupID.y + gl_WorkGroupID.z * 65535u) * (WG / TPR) + tid / TPR;
    if (s >= pc.nslots) {
        return; // uniform over the workgroup
    }
    bool live = r < pc.nrows;
    uint e = pc.ids.v[s];
    uint xrow = (pc.x_per_slot != 0u) ? s : s / pc.k;
    uint xw = xrow * (pc.ncols / 4u);
    uint xc = xrow * (pc.ncols / 32u) * 4u;
    float acc = 0.0;
    if (live) {
        const uint UPB = BLOCK_ELEMS / UNIT; // units per block
        uint nunits = pc.ncols / UNIT;
        uint row = e * pc.expert_bytes + (pc.row0 + r) * pc.row_bytes;
        for (uint i = lane; i < nunits; i += TPR) {
            uint bb = block_byte(row, i / UPB);
            uint e0 = i * UNIT;
            acc += unit_dot(pc.w, bb, i % UPB, pc.xq, pc.xs, xw + e0 / 4u, xc + (e0 / 32u) * 4u);
        }
    }
    float total = row_sum(acc, tid, lane);
    if (lane == 0u && live) {
        if (pc.has_scale != 0u) {
            total *= pc.scale.v[e];
        }
        pc.y.v[s * pc.nrows + r] = total;
    }
}
