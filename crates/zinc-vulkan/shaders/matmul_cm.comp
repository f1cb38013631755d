#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
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
// Dispatch: (ceil(ntok / 128), min(R, 65535), ceil(R / 65535)) with R = ceil(nrows / 64): the token
//   tile is gl_WorkGroupID.x (fastest: the tiles that share a weight slice run together), the
//   row tile y + z·65535.
// A workgroup computes BN = 128 tokens × BM = 64 rows, BK = 32 columns at a time: the weight
// tile is dequantized (dequant16, dequant.glsl) into shared memory as f16, the activation tile
// converted to f16 beside it; subgroup s owns tokens 32s .. 32s + 31 over all 64 rows (2×4
// accumulators). Results go out through a per-subgroup 16×16 staging tile, so partial tiles are
// written with bounds checks.

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

const uint BM = 64u;  // weight rows
const uint BN = 128u; // tokens
const uint BK = 32u;
const uint LD = BK + 8u; // padded row stride (halves) of the input tiles

shared float16_t Xs[BN * LD];
shared float16_t Ws[BM * LD];
shared float Cs[4u * 256u]; // a 16×16 staging tile per subgroup

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
    uint lane = tid % 32u;
    uint tq = sg * 32u; // this subgroup's tokens: tq .. tq + 31, all BM rows

    CM_C acc[2][4];
    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            acc[i][j] = CM_C(0.0);
        }
    }

    // Loading: invocation tid dequantizes 16 consecutive columns of one weight row (they share
    // their block's scales) and converts 32 activations.
    uint lr = tid / 2u;          // weight tile row 0..63
    uint lk = (tid % 2u) * 16u;  // its first column, 0 or 16
    uint wr = r0 + lr;
    for (uint k0 = 0u; k0 < pc.ncols; k0 += BK) {
        uint c = k0 + lk;
        if (wr < pc.nrows) {
            float v[16];
            dequant16(pc.w, wr * pc.row_bytes + (c / BLOCK_ELEMS) * BLOCK_BYTES, c % BLOCK_ELEMS, v);
            [[unroll]] for (uint e = 0u; e < 16u; e++) {
                Ws[lr * LD + lk + e] = float16_t(v[e]);
            }
        } else {
            [[unroll]] for (uint e = 0u; e < 16u; e++) {
                Ws[lr * LD + lk + e] = float16_t(0.0);
            }
        }
        // A subgroup reads 32 consecutive columns of one token at a time (coalesced).
        [[unroll]] for (uint i = 0u; i < BN * BK / 128u; i++) {
            uint idx = tid + 128u * i;
            uint tt = idx / BK, kk = idx % BK;
            float xv = (t0 + tt < pc.ntok) ? pc.x.v[(t0 + tt) * pc.ncols + k0 + kk] : 0.0;
            Xs[tt * LD + kk] = float16_t(xv);
        }
        barrier();
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            CM_A a[2];
            CM_B b[4];
            [[unroll]] for (uint i = 0u; i < 2u; i++) {
                // A: 16 tokens × 16 columns, row-major in Xs.
                coopMatLoad(a[i], Xs, (tq + 16u * i) * LD + kk, LD, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                // B: 16 columns × 16 rows = Ws rows read as columns (column-major).
                coopMatLoad(b[j], Ws, (16u * j) * LD + kk, LD, gl_CooperativeMatrixLayoutColumnMajor);
            }
            [[unroll]] for (uint i = 0u; i < 2u; i++) {
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
                }
            }
        }
        barrier();
    }

    // Each 16×16 result through this subgroup's staging tile, written with bounds checks.
    [[unroll]] for (uint i = 0u; i < 2u; i++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            coopMatStore(acc[i][j], Cs, sg * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint idx = lane; idx < 256u; idx += 32u) {
                uint t = t0 + tq + 16u * i + idx / 16u;
                uint r = r0 + 16u * j + idx % 16u;
                if (t < pc.ntok && r < pc.nrows) {
                    pc.y.v[t * pc.nrows + r] = Cs[sg * 256u + idx];
                }
            }
            subgroupBarrier();
        }
    }
}
