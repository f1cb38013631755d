#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_spirv_intrinsics : require
// matvecq.comp — Y = W·X with integer dot products (per format), for decode steps and prompts
// alike: the activations arrive quantized by quant_act.comp, weights are widened to packed
// bytes and multiplied four at a time (dotq.glsl). Used where the device has
// shaderIntegerDotProduct; matvec.comp / matmul.comp are the float path for other devices and
// for F32/F16/BF16 weights.
//
// Buffers (device addresses in the push constants):
//   w  : Words  — the weight, nrows rows of row_bytes bytes each (GGML blocks of TYPE_<FMT>)
//   xq : Words  — ntok × ncols signed activation bytes (quant_act.comp)
//   xs : Floats — ntok × ncols/32 chunks of four floats (quant_act.comp)
//   y  : Floats — ntok × nrows outputs, row-major f32 (y[t·nrows + r])
// Push constants (std430, in order): Words w; Words xq; Floats xs; Floats y; uint ncols;
//   uint nrows; uint row_bytes; uint ntok; uint accumulate (1: y += W·x, a residual connection).
// Specialization constants: 0 = WG, the workgroup size (default 128); 1 = TPR, threads per row
//   (a power of two dividing WG, default 16); 2 = NT, tokens per invocation (1..16, default 1);
//   3 = NR, rows per group of TPR lanes (NT·NR ≤ 16, default 1).
// Dispatch: (ceil(ntok / NT), min(G, 65535), ceil(G / 65535)) with G = ceil(nrows / (WG / TPR
//   · NR)) row groups: the token group is gl_WorkGroupID.x (fastest, so the workgroups that
//   share a slice of W run together and find it in cache), the row group y + z·65535.
// A group of TPR lanes owns NR consecutive rows; its lanes take the rows' units (UNIT elements,
// dotq.glsl) in turn — lanes next to each other read neighbouring bytes — and each unit of the
// NR rows is dotted with NT tokens' activations, so a lane has NR rows' loads in flight at once
// and reads each activation unit once for them.
// Subgroup shuffles reduce a row's lanes when the subgroup holds them, else shared memory does
// (the host takes this kernel only where the device has subgroup shuffles).

#include "common.glsl"
#include "dequant.glsl"
#include "dotq.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint TPR = 16;
layout(constant_id = 2) const uint NT = 1;
layout(constant_id = 3) const uint NR = 1;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Words xq;
    Floats xs;
    Floats y;
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint ntok;
    uint accumulate;
} pc;

shared float red[WG];

// The lanes of a row sum `v` (every lane gets the total on the subgroup path, lane 0 always).
float row_sum(float v, uint tid, uint lane) {
    if (TPR == 1u) {
        return v;
    }
    if (gl_SubgroupSize >= TPR) {
        // A row's lanes are consecutive invocations, TPR-aligned: one subgroup holds them.
        [[unroll]] for (uint s = TPR / 2u; s > 0u; s >>= 1) {
            v += subgroupShuffleXor(v, s);
        }
        return v;
    }
    barrier(); // the previous token's sums have been read
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
    uint slot = (gl_WorkGroupID.y + gl_WorkGroupID.z * 65535u) * (WG / TPR) + tid / TPR;
    uint r0 = slot * NR; // the group's first row
    uint t0 = gl_WorkGroupID.x * NT;
    bool live = r0 < pc.nrows && t0 < pc.ntok;
    float acc[16];
    uint xw[16];
    uint xc[16];
    uint rowb[16];
    [[unroll]] for (uint j = 0u; j < NT; j++) {
        uint t = min(t0 + j, pc.ntok - 1u); // past the end: recompute the last token
        xw[j] = t * (pc.ncols / 4u);
        xc[j] = t * (pc.ncols / 32u) * 4u;
    }
    [[unroll]] for (uint k = 0u; k < NR; k++) {
        // Rows past the end re-read the last row (results dropped): loads stay uniform.
        rowb[k] = min(r0 + k, pc.nrows - 1u) * pc.row_bytes;
    }
    [[unroll]] for (uint a = 0u; a < NT * NR; a++) {
        acc[a] = 0.0;
    }
    if (live) {
        const uint UPB = BLOCK_ELEMS / UNIT; // units per block
        uint nunits = pc.ncols / UNIT;
        for (uint i = lane; i < nunits; i += TPR) {
            uint blk = i / UPB;
            uint u = i % UPB;
            uint e0 = i * UNIT;
            [[unroll]] for (uint k = 0u; k < NR; k++) {
                [[unroll]] for (uint j = 0u; j < NT; j++) {
                    acc[j * NR + k] += unit_dot(pc.w, block_byte(rowb[k], blk), u, pc.xq, pc.xs,
                                                xw[j] + e0 / 4u, xc[j] + (e0 / 32u) * 4u);
                }
            }
        }
    }
    [[unroll]] for (uint j = 0u; j < NT; j++) {
        [[unroll]] for (uint k = 0u; k < NR; k++) {
            float total = row_sum(acc[j * NR + k], tid, lane);
            uint r = r0 + k;
            if (lane == 0u && live && r < pc.nrows && t0 + j < pc.ntok) {
                uint at = (t0 + j) * pc.nrows + r;
                pc.y.v[at] = pc.accumulate == 1u ? pc.y.v[at] + total : total;
            }
        }
    }
}
