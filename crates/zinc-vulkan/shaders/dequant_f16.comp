#version 450
// dequant_f16.comp — a quantized weight decoded into f16 rows (the prompt mat-mul then reads
// them as matmul_cm_F16 does an F16 weight): the values dequant16 (dequant.glsl) gives, rounded
// to f16 as matmul_cm.comp rounds them.
//
// Buffers (device addresses in the push constants):
//   w   : Words — the weight, nrows rows of row_bytes bytes (GGML blocks of TYPE_<FMT>)
//   out : Words — nrows × ncols f16 values, row-major, two to a word
// Push constants (std430, in order): Words w; Words out; uint ncols (a multiple of 16);
//   uint nrows; uint row_bytes.
// Workgroup: 256 invocations, each 16 consecutive values of one row (two 16-byte stores).
// Dispatch, 1-D and z-folded (wg_linear()): ceil(nrows · ncols / 16 / 256) workgroups.

#include "common.glsl"
#include "dequant.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Words out_;
    uint ncols;
    uint nrows;
    uint row_bytes;
} pc;

void main() {
    uint chunk = wg_linear() * 256u + gl_LocalInvocationID.x;
    uint per_row = pc.ncols / 16u;
    uint r = chunk / per_row;
    if (r >= pc.nrows) {
        return;
    }
    uint c = (chunk % per_row) * 16u;
    float v[16];
    dequant16(pc.w, block_byte(r * pc.row_bytes, c / BLOCK_ELEMS), c % BLOCK_ELEMS, v);
    uint at = (r * pc.ncols + c) / 8u;
    Quads o = Quads(pc.out_);
    o.v[at] = uvec4(packHalf2x16(vec2(v[0], v[1])), packHalf2x16(vec2(v[2], v[3])),
                    packHalf2x16(vec2(v[4], v[5])), packHalf2x16(vec2(v[6], v[7])));
    o.v[at + 1u] = uvec4(packHalf2x16(vec2(v[8], v[9])), packHalf2x16(vec2(v[10], v[11])),
                         packHalf2x16(vec2(v[12], v[13])), packHalf2x16(vec2(v[14], v[15])));
}
