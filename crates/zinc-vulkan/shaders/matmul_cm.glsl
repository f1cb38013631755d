#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
// matmul_cm.glsl — Y = W·X for prompts with cooperative matrices (VK_KHR_cooperative_matrix,
// 16×16×16 f16 inputs, f32 accumulators), per format (F16 rows are read as they are: the
// host uses that variant for F16 weights and for quantized ones first dequantized to f16 rows).
// Two kernels: matmul_cm.comp (dense, as below) and moe_matmul_cm.comp (MOE defined: the
// experts of a mixture of experts, grouped).
//
// Buffers (device addresses in the push constants):
//   w : Words  — the weight, nrows rows of row_bytes bytes each (GGML blocks of TYPE_<FMT>)
//   x : Floats — ntok × ncols activations, row-major f32, already rounded as the CPU's dot
//                product sees them (act_quant.comp), or those values as f16 pairs (XH = 1)
//   y : Floats — ntok × nrows outputs, row-major f32 (y[t·nrows + r])
// Push constants (std430, in order): Words w; Floats x; Floats y; uint ncols; uint nrows;
//   uint row_bytes; uint ntok.  (The block of matmul.comp.)
// Specialization constants: 0 = WG, the workgroup size: 32·SGN·SGM invocations (the host takes
//   this kernel only where the subgroup size is 32 and 16×16×16 f16/f32 cooperative matrices
//   exist); 1 = SGM, subgroups along the weight rows (1 or 2); 2 = BK, columns a step (32 or
//   64); 3 = XH, 1 where x holds f16 pairs; 4 = TM, 16-token accumulator tiles a subgroup (2 or
//   4; 0 reads as 2). Each subgroup computes 16·TM tokens × 64 rows (TM×4 accumulators: at 4,
//   each weight fragment read from shared memory serves twice the products), so a workgroup's
//   tile is BN = 16·TM·SGN tokens × BM = 64·SGM rows.
// Dispatch: (ceil(ntok / BN), min(R, 65535), ceil(R / 65535)) with R = ceil(nrows / BM): the
//   token tile is gl_WorkGroupID.x (fastest: the tiles that share a weight slice run together),
//   the row tile y + z·65535.
// MOE: x is a tile of moe_sort.comp's table (expert e, start, len: expert e's slots
//   order[start .. start + len), at most BN), the weight rows row0 + r of expert e (byte
//   e·expert_bytes), slot s reads x row (x_per_slot != 0 ? s : s / k) and writes y row s,
//   times scale[e] where has_scale != 0; ntok is unused. Push constants: Words w; Floats x;
//   Floats y; Words order; Words tiles; Floats scale; uint ncols; uint nrows; uint row_bytes;
//   uint ntok; uint expert_bytes; uint k; uint x_per_slot; uint has_scale; uint row0.
//   Dispatch: (the table's length, min(R, 65535), ceil(R / 65535)); empty tiles return.
// Per step of BK columns the weight tile is dequantized (dequant16, dequant.glsl: 16 columns of
// one row per invocation and round) into shared memory as f16, the activation tile read as
// 16-byte vectors and converted beside it; both tiles are stored 8 halves at a time. Results go out through a per-subgroup 16×16 staging
// tile, so partial tiles are written with bounds checks.

#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint SGM = 1;
layout(constant_id = 2) const uint BK = 32;
layout(constant_id = 3) const uint XH = 0; // 1: x holds f16 pairs (act_quant.comp's half_out)
layout(constant_id = 4) const uint TM_SPEC = 2;
const uint TM = TM_SPEC == 4u ? 4u : 2u;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Words w;
    Floats x;
    Floats y;
#if defined(MOE)
    Words order;
    Words tiles;
    Floats scale;
#endif
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint ntok;
#if defined(MOE)
    uint expert_bytes;
    uint k;
    uint x_per_slot;
    uint has_scale;
    uint row0;
#endif
} pc;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Floats4 { vec4 v[]; };

const uint NSG = WG / 32u;
const uint SGN = NSG / SGM;
const uint BM = 64u * SGM; // weight rows
const uint BN = 16u * TM * SGN; // tokens
const uint LD = BK / 8u + 1u; // padded row stride of the input tiles, in vectors of 8 halves

// The f16 tiles as 16-byte vectors of 8 halves: written a vector at a time, read by
// coopMatLoad in the same units.
shared uvec4 Xs[BN * LD];
shared uvec4 Ws[BM * LD];
shared float Cs[NSG * 256u]; // a 16×16 staging tile per subgroup

// This workgroup's weight rows start at byte wbase; its tokens are tlen rows of x, token tt at
// row xrow[tt], its outputs going to row orow[tt] of y (MoE: a tile of one expert's slots).
uint wbase;
uint tlen;
shared uint xrow[BN];
shared uint orow[BN];

#define CM_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

const uint CPR = BK / 16u;        // 16-column weight chunks per tile row
const uint NWC = BK / (8u * SGN); // weight chunks per invocation per step (BM·CPR / WG), ≤ 4
const uint NXC = TM * BK / (16u * SGM); // 8-column activation chunks an invocation (BN·BK/8 / WG)

// Step k0's tiles into registers. Weights: chunk ch = 16 consecutive columns of one row (they
// share their block's scales), neighbouring invocations on neighbouring chunks; F16 rows (an F16
// weight, or one dequantized by dequant_f16.comp) are read as they are, other formats
// dequantized (dequant16). Activations: 8 consecutive columns of one token (ncols is a multiple
// of 32, so rows start 16-byte aligned).
void fetch(uint k0, uint r0, uint tid, out uvec4 wst[8], out vec4 xst[32]) {
    [[unroll]] for (uint n = 0u; n < NWC; n++) {
        uint ch = tid + n * WG;
        uint wr = r0 + ch / CPR;
        uint c = k0 + (ch % CPR) * 16u;
        wst[2u * n] = uvec4(0u);
        wst[2u * n + 1u] = uvec4(0u);
        if (wr < pc.nrows) {
#if defined(TYPE_F16)
            uint at = (wbase + wr * pc.row_bytes + 2u * c) / 16u;
            wst[2u * n] = Quads(pc.w).v[at];
            wst[2u * n + 1u] = Quads(pc.w).v[at + 1u];
#else
            float v[16];
            dequant16(pc.w, block_byte(wbase + wr * pc.row_bytes, c / BLOCK_ELEMS), c % BLOCK_ELEMS, v);
            wst[2u * n] = uvec4(packHalf2x16(vec2(v[0], v[1])), packHalf2x16(vec2(v[2], v[3])),
                                packHalf2x16(vec2(v[4], v[5])), packHalf2x16(vec2(v[6], v[7])));
            wst[2u * n + 1u] = uvec4(packHalf2x16(vec2(v[8], v[9])), packHalf2x16(vec2(v[10], v[11])),
                                     packHalf2x16(vec2(v[12], v[13])), packHalf2x16(vec2(v[14], v[15])));
#endif
        }
    }
    Floats4 x4 = Floats4(pc.x);
    [[unroll]] for (uint n = 0u; n < NXC; n++) {
        uint i = tid + n * WG;
        uint tt = i / (BK / 8u);
        uint kk = (i % (BK / 8u)) * 8u;
        xst[2u * n] = vec4(0.0);
        xst[2u * n + 1u] = vec4(0.0);
        if (tt < tlen) {
            uint at = (xrow[tt] * pc.ncols + k0 + kk) / 4u;
            if (XH == 1u) {
                // 8 halves already rounded: carried as bits, stored as they are.
                xst[2u * n] = uintBitsToFloat(Quads(pc.x).v[at / 2u]);
            } else {
                xst[2u * n] = x4.v[at];
                xst[2u * n + 1u] = x4.v[at + 1u];
            }
        }
    }
}

// The fetched tiles into shared memory as f16, 8 halves a store.
void commit(uint tid, uvec4 wst[8], vec4 xst[32]) {
    [[unroll]] for (uint n = 0u; n < NWC; n++) {
        uint ch = tid + n * WG;
        uint at = (ch / CPR) * LD + (ch % CPR) * 2u;
        Ws[at] = wst[2u * n];
        Ws[at + 1u] = wst[2u * n + 1u];
    }
    [[unroll]] for (uint n = 0u; n < NXC; n++) {
        uint i = tid + n * WG;
        uint tt = i / (BK / 8u);
        uint kk = (i % (BK / 8u)) * 8u;
        vec4 a = xst[2u * n], b = xst[2u * n + 1u];
        Xs[tt * LD + kk / 8u] = XH == 1u ? floatBitsToUint(a)
            : uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw));
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint r0 = (gl_WorkGroupID.y + gl_WorkGroupID.z * 65535u) * BM;
#if defined(MOE)
    // Tile x of moe_sort.comp's table: expert e's slots order[start .. start + len).
    uint e = pc.tiles.v[3u * gl_WorkGroupID.x];
    uint start = pc.tiles.v[3u * gl_WorkGroupID.x + 1u];
    tlen = pc.tiles.v[3u * gl_WorkGroupID.x + 2u];
    if (tlen == 0u || r0 >= pc.nrows) {
        return; // uniform over the workgroup
    }
    wbase = e * pc.expert_bytes + pc.row0 * pc.row_bytes;
    float oscale = pc.has_scale != 0u ? pc.scale.v[e] : 1.0;
    for (uint i = tid; i < tlen; i += WG) {
        uint slot = pc.order.v[start + i];
        orow[i] = slot;
        xrow[i] = pc.x_per_slot != 0u ? slot : slot / pc.k;
    }
#else
    uint t0 = gl_WorkGroupID.x * BN;
    if (t0 >= pc.ntok || r0 >= pc.nrows) {
        return; // uniform over the workgroup
    }
    wbase = 0u;
    tlen = min(BN, pc.ntok - t0);
    const float oscale = 1.0;
    for (uint i = tid; i < tlen; i += WG) {
        orow[i] = t0 + i;
        xrow[i] = t0 + i;
    }
#endif
    barrier();
    uint sg = tid / 32u;
    uint lane = tid % 32u;
    uint tq = (sg % SGN) * 16u * TM; // this subgroup's tokens: tq .. tq + 16·TM − 1
    uint rq = (sg / SGN) * 64u; // and rows: rq .. rq + 63

    CM_C acc[TM][4];
    [[unroll]] for (uint i = 0u; i < TM; i++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            acc[i][j] = CM_C(0.0);
        }
    }

    // Each step's tiles go global → registers (fetch) → shared memory (commit): the next step's
    // fetch is issued before this step's multiplications, so its loads are in flight meanwhile.
    uvec4 wst[8]; // NWC weight chunks of 16 halves
    vec4 xst[32]; // NXC activation chunks of 8 floats
    fetch(0u, r0, tid, wst, xst);
    for (uint k0 = 0u; k0 < pc.ncols; k0 += BK) {
        commit(tid, wst, xst);
        barrier();
        if (k0 + BK < pc.ncols) {
            fetch(k0 + BK, r0, tid, wst, xst);
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            CM_A a[TM];
            CM_B b[4];
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                // A: 16 tokens × 16 columns, row-major in Xs.
                coopMatLoad(a[i], Xs, (tq + 16u * i) * LD + kk / 8u, LD, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                // B: 16 columns × 16 rows = Ws rows read as columns (column-major).
                coopMatLoad(b[j], Ws, (rq + 16u * j) * LD + kk / 8u, LD, gl_CooperativeMatrixLayoutColumnMajor);
            }
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                [[unroll]] for (uint j = 0u; j < 4u; j++) {
                    acc[i][j] = coopMatMulAdd(a[i], b[j], acc[i][j]);
                }
            }
        }
        barrier();
    }

    // Each 16×16 result through this subgroup's staging tile, written with bounds checks.
    [[unroll]] for (uint i = 0u; i < TM; i++) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            coopMatStore(acc[i][j], Cs, sg * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint idx = lane; idx < 256u; idx += 32u) {
                uint tt = tq + 16u * i + idx / 16u;
                uint r = r0 + rq + 16u * j + idx % 16u;
                if (tt < tlen && r < pc.nrows) {
                    pc.y.v[orow[tt] * pc.nrows + r] = oscale * Cs[sg * 256u + idx];
                }
            }
            subgroupBarrier();
        }
    }
}
