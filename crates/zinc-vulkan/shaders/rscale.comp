#version 450
// rscale.comp — finishes a fused RMSNorm in place: x = z · r per row, r = 1 / sqrt(mean + eps)
// from the per-256-value partial sums of squares matvec_dec.comp's FUSE left (dfloat.glsl's
// parts_scale, the scale the mat-vecs that read the quantized z apply). For readers of the
// normed rows other than those mat-vecs.
//
// Buffers (device addresses in the push constants): x : Floats — nrows × ncols, z in, r·z out;
//   p : Floats — (hi, lo) per (row, 256-value block).
// Push constants (std430, in order): Floats x; Floats p; uint ncols (a multiple of 256);
//   uint nrows; float eps.
// Workgroup: 256 invocations, 4 values each. Dispatch, z-folded (wg_linear()):
//   nrows · ncols / 1024 (rounded up per row) workgroups.

#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats p;
    uint ncols;
    uint nrows;
    float eps;
} pc;

#include "dfloat.glsl"

void main() {
    uint chunks = (pc.ncols + 1023u) / 1024u;
    uint row = wg_linear() / chunks;
    if (row >= pc.nrows) {
        return; // uniform over the workgroup
    }
    float r = parts_scale(pc.p, row, pc.ncols, pc.eps);
    uint j = (wg_linear() % chunks) * 1024u + 4u * gl_LocalInvocationID.x;
    if (j < pc.ncols) {
        uint at = row * pc.ncols + j;
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            pc.x.v[at + k] *= r;
        }
    }
}
