#version 450
// argmax.comp — index of the largest value of each row (greedy sampling).
//
// Buffers (device addresses in the push constants):
//   x   : Floats — nrows × ncols values, row-major f32
//   out : Words  — nrows indices (u32)
// Push constants (std430, in order): Floats x; Words out; uint ncols; uint nrows.
// Specialization constant 0: WG, the workgroup size (default 256; any value ≥ 1).
// Dispatch: (min(nrows, 65535), 1, ceil(nrows / 65535)) workgroups; row = wg_linear()
//   (rows past nrows exit).
// out[row] = the index of the largest value; ties → the lowest index; NaN never wins (a row of
// NaNs only gives 0). Each invocation scans a strided share, then (value, index) pairs are
// reduced through shared memory.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Words out_ids;
    uint ncols;
    uint nrows;
} pc;

const uint NONE = 0xFFFFFFFFu;

shared float best_v[WG];
shared uint best_i[WG];

// Whether (v, i) beats (bv, bi): NaN never does; larger value, or equal value and lower index.
bool better(float v, uint i, float bv, uint bi) {
    if (i == NONE || isnan(v)) {
        return false;
    }
    return bi == NONE || v > bv || (v == bv && i < bi);
}

void main() {
    uint row = wg_linear();
    if (row >= pc.nrows) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint base = row * pc.ncols;

    float bv = 0.0;
    uint bi = NONE;
    for (uint c = tid; c < pc.ncols; c += WG) {
        float v = pc.x.v[base + c];
        if (better(v, c, bv, bi)) {
            bv = v;
            bi = c;
        }
    }
    best_v[tid] = bv;
    best_i[tid] = bi;
    for (uint s = 1u; s < WG; s *= 2u) {
        barrier();
        if ((tid % (2u * s)) == 0u && tid + s < WG) {
            if (better(best_v[tid + s], best_i[tid + s], best_v[tid], best_i[tid])) {
                best_v[tid] = best_v[tid + s];
                best_i[tid] = best_i[tid + s];
            }
        }
    }
    if (tid == 0u) {
        pc.out_ids.v[row] = (best_i[0] == NONE) ? 0u : best_i[0];
    }
}
