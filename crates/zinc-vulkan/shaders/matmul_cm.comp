#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
// matmul_cm.comp — Y = W·X for prompts with cooperative matrices (VK_KHR_cooperative_matrix,
// 16×16×16 f16 inputs, f32 accumulators), per format.
//
// Buffers (device addresses in the push constants):
//   w : Words  — the weight, nrows rows of row_bytes bytes each (GGML blocks of TYPE_<FMT>)
//   x : Floats — ntok × ncols activations, row-major f32, already rounded as the CPU's dot
//                product sees them (act_quant.comp); they are exact in f16 up to its rounding
//   y : Floats — ntok × nrows outputs, row-major f32 (y[t·nrows + r])
// Push constants (std430, in order): Words w; Floats x; Floats y; uint ncols; uint nrows;
//   uint row_bytes; uint ntok.  (The block of matmul.comp.)
// Workgroup: 128 invocations = 4 subgroups of 32 (the host takes this kernel only where the
//   subgroup size is 32 and 16×16×16 f16/f32 cooperative matrices exist). No spec constants.
// Dispatch: (ceil(ntok / BN), min(R, 65535), ceil(R / 65535)) with R = ceil(nrows / BM): the token
//   tile is gl_WorkGroupID.x (fastest: the tiles that share a weight slice run together), the
//   row tile y + z·65535.
// A workgroup computes BN = 64 tokens × BM = 64 rows, BK = 32 columns at a time: the weight tile
// is dequantized (dequant.glsl) into shared memory as f16, the activation tile converted to f16
// beside it; subgroup s owns the 32×32 quarter (s / 2, s % 2): 2×2 accumulators. Results go
// through shared memory so partial tiles are written with bounds checks.

#include "common.glsl"
#include "dequant.glsl"

layout(local_size_x = 128) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Floats x;
    Floats y;
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint ntok;
} pc;

const uint BM = 64u; // weight rows
const uint BN = 64u; // tokens
const uint BK = 32u;
const uint LD = BK + 8u; // padded row stride (halves) of the input tiles

shared float16_t Xs[BN * LD];
shared float16_t Ws[BM * LD];
shared float Cs[BN * BM];

#define CM_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint t0 = gl_WorkGroupID.x * BN;
    uint r0 = (gl_WorkGroupID.y + gl_WorkGroupID.z * 65535u) * BM;
    if (t0 >= pc.ntok || r0 >= pc.nrows) {
        return; // uniform over the workgroup
    }
    uint sg = tid / 32u;
    uint tq = (sg / 2u) * 32u; // this subgroup's quarter: tokens tq.., rows rq..
    uint rq = (sg % 2u) * 32u;

    CM_C acc[2][2];
    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            acc[i][j] = CM_C(0.0);
        }
    }

    // Loading: invocation tid fills half a row of each tile (16 consecutive columns), so a
    // weight row's 16 elements share their block's scales.
    uint lr = tid / 2u;          // tile row 0..63
    uint lk = (tid % 2u) * 16u;  // first column 0 or 16
    uint wr = r0 + lr;
    uint xt = t0 + lr;
    for (uint k0 = 0u; k0 < pc.ncols; k0 += BK) {
        uint c = k0 + lk;
        if (wr < pc.nrows) {
            uint bb = wr * pc.row_bytes + (c / BLOCK_ELEMS) * BLOCK_BYTES;
            uint e0 = c % BLOCK_ELEMS;
            [[unroll]] for (uint e = 0u; e < 16u; e++) {
                Ws[lr * LD + lk + e] = float16_t(dequant_block(pc.w, bb, e0 + e));
            }
        } else {
            [[unroll]] for (uint e = 0u; e < 16u; e++) {
                Ws[lr * LD + lk + e] = float16_t(0.0);
            }
        }
        if (xt < pc.ntok) {
            uint xo = xt * pc.ncols + c;
            [[unroll]] for (uint e = 0u; e < 16u; e++) {
                Xs[lr * LD + lk + e] = float16_t(pc.x.v[xo + e]);
            }
        } else {
            [[unroll]] for (uint e = 0u; e < 16u; e++) {
                Xs[lr * LD + lk + e] = float16_t(0.0);
            }
        }
        barrier();
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            CM_A a[2];
            CM_B b[2];
            [[unroll]] for (uint i = 0u; i < 2u; i++) {
                // A: 16 tokens × 16 columns, row-major in Xs.
                coopMatLoad(a[i], Xs, (tq + 16u * i) * LD + kk, LD, gl_CooperativeMatrixLayoutRowMajor);
                // B: 16 columns × 16 rows = Ws rows read as columns (column-major).
                coopMatLoad(b[i], Ws, (rq + 16u * i) * LD + kk, LD, gl_CooperativeMatrixLayoutColumnMajor);
            }
            [[unroll]] for (uint i = 0u; i < 2u; i++) {
                [[unroll]] for (uint j = 0u; j < 2u; j++) {
                    acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
                }
            }
        }
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        [[unroll]] for (uint j = 0u; j < 2u; j++) {
            coopMatStore(acc[i][j], Cs, (tq + 16u * i) * BM + rq + 16u * j, BM,
                         gl_CooperativeMatrixLayoutRowMajor);
        }
    }
    barrier();
    for (uint idx = tid; idx < BN * BM; idx += 128u) {
        uint t = t0 + idx / BM;
        uint r = r0 + idx % BM;
        if (t < pc.ntok && r < pc.nrows) {
            pc.y.v[t * pc.nrows + r] = Cs[idx];
        }
    }
}
