#version 450
// matmul.comp — Y = W·X for many token rows, tiled through shared memory (per format).
//
// Buffers (device addresses in the push constants):
//   w : Words  — the weight, nrows rows of row_bytes bytes each, in the GGML block layout of
//                TYPE_<FMT> (see dequant.glsl); row r starts at byte r·row_bytes
//   x : Floats — ntok × ncols activations, row-major f32 (x[t·ncols + c])
//   y : Floats — ntok × nrows outputs, row-major f32 (y[t·nrows + r])
// Push constants (std430, in order): Words w; Floats x; Floats y; uint ncols; uint nrows;
//   uint row_bytes; uint ntok.  (Same block as matvec.comp.)
// Specialization constant 0: WG, the workgroup size — must stay 256 (the default): each of the
//   256 invocations owns 8 of the 64×32 outputs of a tile.
// Dispatch: (min(R, 65535), ceil(ntok / 32), ceil(R / 65535)) workgroups with R = ceil(nrows / 64):
//   the row tile is wg_linear() (tiles past R exit), the token tile gl_WorkGroupID.y.
// Each workgroup computes a tile of TM = 64 weight rows × TN = 32 tokens, stepping TK = 32
// columns at a time: the W tile is dequantized into shared memory, the X tile copied there, then
// invocation (rr = tid % 64, tg = tid / 64) accumulates rows r0+rr × tokens t0+tg+4i, i < 8.
// Partial tiles (nrows, ntok or ncols not multiples of 64/32/32) are zero-padded / not written.

#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Floats x;
    Floats y;
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint ntok;
} pc;

const uint TM = 64u;
const uint TN = 32u;
const uint TK = 32u;
const uint NT = 8u; // tokens per invocation: TN / (256 / TM)

// +1 padding keeps column reads of consecutive rows in different banks.
shared float Ws[TM][TK + 1u];
shared float Xs[TN][TK + 1u];

void main() {
    uint tile = wg_linear();
    uint r0 = tile * TM;
    uint t0 = gl_WorkGroupID.y * TN;
    if (r0 >= pc.nrows || t0 >= pc.ntok) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint rr = tid % TM;
    uint tg = tid / TM;

    float acc[NT];
    for (uint i = 0u; i < NT; i++) {
        acc[i] = 0.0;
    }

    for (uint k0 = 0u; k0 < pc.ncols; k0 += TK) {
        for (uint idx = tid; idx < TM * TK; idx += WG) {
            uint a = idx / TK, kk = idx % TK;
            uint r = r0 + a, c = k0 + kk;
            Ws[a][kk] = (r < pc.nrows && c < pc.ncols) ? dequant(pc.w, r * pc.row_bytes, c) : 0.0;
        }
        for (uint idx = tid; idx < TN * TK; idx += WG) {
            uint a = idx / TK, kk = idx % TK;
            uint t = t0 + a, c = k0 + kk;
            Xs[a][kk] = (t < pc.ntok && c < pc.ncols) ? pc.x.v[t * pc.ncols + c] : 0.0;
        }
        barrier();
        for (uint kk = 0u; kk < TK; kk++) {
            float wv = Ws[rr][kk];
            for (uint i = 0u; i < NT; i++) {
                acc[i] += wv * Xs[tg + 4u * i][kk];
            }
        }
        barrier();
    }

    uint r = r0 + rr;
    if (r < pc.nrows) {
        for (uint i = 0u; i < NT; i++) {
            uint t = t0 + tg + 4u * i;
            if (t < pc.ntok) {
                pc.y.v[t * pc.nrows + r] = acc[i];
            }
        }
    }
}
