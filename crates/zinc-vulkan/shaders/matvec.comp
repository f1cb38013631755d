#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// matvec.comp — y = W·x for a few token rows, WG / TPR weight rows per workgroup (per format).
//
// Buffers (device addresses in the push constants):
//   w : Words  — the weight, nrows rows of row_bytes bytes each, in the GGML block layout of
//                TYPE_<FMT> (see dequant.glsl); row r starts at byte r·row_bytes
//   x : Floats — ntok × ncols activations, row-major f32 (x[t·ncols + c])
//   y : Floats — ntok × nrows outputs, row-major f32 (y[t·nrows + r])
// Push constants (std430, in order): Words w; Floats x; Floats y; uint ncols; uint nrows;
//   uint row_bytes; uint ntok; Floats rs; float eps; uint has_rs (x a fused RMSNorm's z, its
//   scale applied to each token's results: an MoE router reading matvec_dec.comp's FUSE output);
//   Words ids; Floats wts; Words cnt; uint k; uint renorm (ROUTE, below).
// Specialization constants: 0 = WG, the workgroup size (default 64); 1 = TPR, threads per row
//   (a power of two dividing WG, default 64); 2 = NT, tokens per invocation (1..8, with TPR = 1,
//   or with TPR > 1 and V4);
//   3 = V4 (below).
// Dispatch: G = ceil(nrows / (WG / TPR)) row groups as (min(G, 65535), ceil(ntok / NT),
//   ceil(G / 65535)); the row group is wg_linear(), the token group gl_WorkGroupID.y.
// y[t·nrows + r] = Σ_c dequant(w, r·row_bytes, c) · x[t·ncols + c]; each of a row's TPR threads
// sums a strided share of the columns, then they reduce (shared memory, then shuffles: SG).

#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint WG = 64;
// Threads per row (a power of two dividing WG): each workgroup computes WG / TPR rows. 1 suits
// CPU devices (lavapipe: no barriers, a row per SIMD lane); 32–64 suits GPUs.
layout(constant_id = 1) const uint TPR = 64;
// Tokens per invocation (1..8): each decoded weight is used NT times. With TPR = 1, or with
// TPR > 1 on f32 weights read as vectors (V4; not with has_rs or ROUTE): a row's lanes then
// take its NT tokens together.
layout(constant_id = 2) const uint NT = 1;
// 1: f32 weights read as 16-byte vectors (TPR > 1; the host checks ncols is a multiple of 4
// and the weight and activation rows are 16-byte aligned). An MoE router (H200, Qwen3-30B-A3B's
// 128 × 2,048) took 11.7 µs a decode step a float at a time.
layout(constant_id = 3) const uint V4 = 0;
// 4 = ROUTE. Bit 0: an MoE router's logits, routed in the same dispatch (TPR > 1, WG ≥ 64, F32
// weights): the last workgroup of each token to finish (a counter per token, device-scope
// atomics) routes it as moe_route.comp's one-pass ranking does (route.glsl: the same picks and
// weights) and writes ids and wts, k per token. The host checks route.glsl's limits and
// subgroup shuffles. Bit 1, SN (with V4 and SG): x is the residual, not yet normalized — the
// dispatch applies the RMSNorm in front of the router itself (weight at rs, epsilon eps) to
// the bit as norm_quant.comp does with 2^(bits 8–12) invocations (sn_dot below), so it needs
// no norm stage before it and runs beside the norm that feeds the experts.
layout(constant_id = 4) const uint ROUTE = 0;
const uint SN = (ROUTE >> 1) & 1u;
const uint SN_V = 1u << ((ROUTE >> 8) & 31u); // the norm's workgroup (SN: at least 4·TPR)
const uint SN_H = (SN_V + 4u * TPR - 1u) / (4u * TPR); // its invocations a lane holds, / 4
// Bits 13–15, timing only (`VulkanOptions::router_stop`; the picks are wrong): 1, the last
// workgroup writes experts 0..k−1 at weight 1/k instead of ranking; 2, no counter either:
// workgroup 0 writes them once its own logits are stored, the others stop there; 3, as 1 but
// pick j is expert 16j + 4 bits of logit j's mantissa (scattered as ranked picks are, without
// the ranking); 4, ranked, then experts 0..k−1 written (the ranking's cost with 1's experts);
// 5, ranked (and its picks written) from the logits read through plain references instead of
// coherent ones (what the coherent loads cost; not safe by the memory model); 6, as 4 from
// stand-in logits made in place, no loads (the ranking's arithmetic alone); 7, as 6 without
// the acquiring barrier before it.
const uint RT_STOP = (ROUTE >> 13) & 7u;
// Bit 16: route.glsl's general ranking whatever the count (`VulkanOptions::route_general`).
const uint RT_GENERAL = (ROUTE >> 16) & 1u;
// 5 = SG, 1 where subgroup shuffles may reduce a row's lanes (the levels narrower than a
// subgroup: the same pairs as the tree's, so the same sums, without its barriers).
layout(constant_id = 5) const uint SG = 0;
layout(local_size_x_id = 0) in;

// Under ROUTE the logits go through coherent references: the routing workgroup reads them.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CFloats { float v[]; };

layout(push_constant, std430) uniform PC {
    Words w;
    Floats x;
    Floats y;
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint ntok;
    Floats rs;   // has_rs: x is a fused RMSNorm's z, each token's scale r applied to its results
    float eps;   //   (dfloat.glsl's parts_scale over rs, with this epsilon); SN: the norm's
                 //   weight and epsilon
    uint has_rs;
    Words ids;   // ROUTE: the picks (k per token), their weights and the counters (one per
    Floats wts;  //   token, zero between dispatches)
    Words cnt;
    uint k;
    uint renorm;
} pc;

const uint RT_ON = ROUTE & 1u;
const uint RT_WG = WG;
// Logit i for the ranking (RT_STOP 5, 6 and 7: the timing variants above).
float rt_logit(uint i) {
    if (RT_STOP >= 6u) {
        return float((i * 37u) & 127u) * 0.01;
    }
    if (RT_STOP == 5u) {
        return pc.y.v[i];
    }
    return CFloats(pc.y).v[i];
}
#define RT_LOGIT(i) rt_logit(i)
#include "route.glsl"

shared uint rt_last;

#define DFLOAT_SHUFFLE 1
#include "dfloat.glsl"

// The factor of token t's results: its norm scale under has_rs, else 1.
float token_scale(uint t) {
    return pc.has_rs != 0u ? parts_scale(pc.rs, t, pc.ncols, pc.eps) : 1.0;
}

shared float red[WG];

// The lanes row_sum pairs by shuffles (the narrower levels); wider ones go through `red`.
uint row_sum_shuffled() {
    return SG == 1u ? min(gl_SubgroupSize, TPR) : 1u;
}

// Whether row_sum goes through `red` (a caller reusing it waits for the last call's reads).
bool row_sum_shared() {
    return row_sum_shuffled() < TPR;
}

// The sum of v over a row's TPR lanes, in lane 0 (every invocation calls it: barriers). A tree
// within the row (every invocation reaches every barrier): its levels as wide as a subgroup or
// wider through shared memory, a barrier each, the rest by shuffles (SG), lane i adding lane
// i ^ s where the tree adds red[i + s] (i < s: the same sums; a row's lanes are consecutive
// invocations, as a subgroup's are).
float row_sum(float v, uint tid, uint lane) {
    red[tid] = v;
    uint sh = row_sum_shuffled();
    for (uint s = TPR / 2u; s >= sh && s > 0u; s >>= 1) {
        barrier();
        if (lane < s) {
            red[tid] += red[tid + s];
        }
    }
    float total = red[tid]; // its own: the last level's lanes wrote theirs
    for (uint s = sh / 2u; s > 0u; s >>= 1) {
        total += subgroupShuffleXor(total, s);
    }
    return total;
}

shared float rs_hi[64];
shared float rs_lo[64];
// SN: the subgroups' sums of each row of the workgroup, (WG / subgroup size) · SN_H of them
// (subgroups of 4 or more).
shared float sn_hi[1u + SN * ((WG / 4u) * SN_H - 1u)];
shared float sn_lo[1u + SN * ((WG / 4u) * SN_H - 1u)];

// SN: Σ over this lane's vectors c = lane + TPR·u (in order) of dot(w[c], (x[c]·r)·g[c]) — the
// V4 path's sum over the norm's output — with r token t0's RMSNorm scale as norm_quant.comp
// computes it with SN_V invocations (rms.glsl): its invocation j adds the squares of values
// j, j + SN_V, … in order, and those sums meet in a butterfly over the bits of j, lowest first,
// the lower one's sum first at every level. Value 4c + i is value i + 4·lane + 4·TPR·u, so
// j's bits are i (2), then lane (log2 TPR), then u mod SN_H: the lane keeps j's sums as
// chains 4·(u mod SN_H) + i and pairs them over i in registers, over lane by shuffles (and
// across subgroups through shared memory), then over u mod SN_H in registers. A value past
// the row adds 0, an exact no-op. Every invocation calls it (barriers).
float sn_dot(uint tid, uint lane, bool live, uint row_byte, uint t0) {
    Quads w4 = Quads(pc.w);
    Quads x4 = Quads(pc.x);
    Quads g4 = Quads(pc.rs);
    uint w0 = row_byte / 16u;
    uint x0 = t0 * pc.ncols / 4u;
    uint n4 = pc.ncols / 4u;
    const uint B = 8u;
    // The first B vectors of x, g and w loaded at once (in flight through the sum).
    vec4 xv[B], gv[B], wv[B];
    [[unroll]] for (uint u = 0u; u < B; u++) {
        uint c = lane + u * TPR;
        xv[u] = c < n4 ? uintBitsToFloat(x4.v[x0 + c]) : vec4(0.0);
        gv[u] = c < n4 ? uintBitsToFloat(g4.v[c]) : vec4(0.0);
        wv[u] = c < n4 && live ? uintBitsToFloat(w4.v[w0 + c]) : vec4(0.0);
    }
    float hi[4u * SN_H], lo[4u * SN_H];
    [[unroll]] for (uint i = 0u; i < 4u * SN_H; i++) {
        hi[i] = 0.0;
        lo[i] = 0.0;
    }
    for (uint u0 = 0u; lane + u0 * TPR < n4; u0 += B) {
        [[unroll]] for (uint u = 0u; u < B; u++) {
            uint c = lane + (u0 + u) * TPR;
            vec4 v = u0 == 0u ? xv[u] : (c < n4 ? uintBitsToFloat(x4.v[x0 + c]) : vec4(0.0));
            uint h = (u0 + u) % SN_H;
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                add_square(hi[4u * h + i], lo[4u * h + i], v[i]);
            }
        }
    }
    [[unroll]] for (uint h = 0u; h < SN_H; h++) {
        two_sum_into(hi[4u * h], lo[4u * h], hi[4u * h + 1u], lo[4u * h + 1u]);
        two_sum_into(hi[4u * h + 2u], lo[4u * h + 2u], hi[4u * h + 3u], lo[4u * h + 3u]);
        two_sum_into(hi[4u * h], lo[4u * h], hi[4u * h + 2u], lo[4u * h + 2u]);
    }
    uint sgs = gl_SubgroupSize;
    for (uint st = 1u; st < min(TPR, sgs); st *= 2u) {
        [[unroll]] for (uint h = 0u; h < SN_H; h++) {
            two_sum_pair(hi[4u * h], lo[4u * h], st, (lane & st) == 0u);
        }
    }
    if (TPR > sgs) { // uniform: the row's subgroups meet
        uint ng = TPR / sgs;
        uint at = (tid / TPR) * ng; // this row's first
        if (gl_SubgroupInvocationID == 0u) {
            [[unroll]] for (uint h = 0u; h < SN_H; h++) {
                sn_hi[(at + lane / sgs) * SN_H + h] = hi[4u * h];
                sn_lo[(at + lane / sgs) * SN_H + h] = lo[4u * h];
            }
        }
        barrier();
        // Every run of ng lanes (ng ≤ the subgroup's: the host's TPR ≤ its square) reads them
        // all and pairs them alike.
        uint l = gl_SubgroupInvocationID % ng;
        [[unroll]] for (uint h = 0u; h < SN_H; h++) {
            hi[4u * h] = sn_hi[(at + l) * SN_H + h];
            lo[4u * h] = sn_lo[(at + l) * SN_H + h];
        }
        for (uint st = 1u; st < ng; st *= 2u) {
            [[unroll]] for (uint h = 0u; h < SN_H; h++) {
                two_sum_pair(hi[4u * h], lo[4u * h], st, (l & st) == 0u);
            }
        }
    }
    [[unroll]] for (uint st = 1u; st < SN_H; st *= 2u) {
        [[unroll]] for (uint h = 0u; h < SN_H; h++) {
            if ((h & st) == 0u) {
                two_sum_into(hi[4u * h], lo[4u * h], hi[4u * (h + st)], lo[4u * (h + st)]);
            }
        }
    }
    float r = mean_scale(hi[0], lo[0], pc.ncols, pc.eps);
    float sum = 0.0;
    for (uint u0 = 0u; lane + u0 * TPR < n4; u0 += B) {
        [[unroll]] for (uint u = 0u; u < B; u++) {
            uint c = lane + (u0 + u) * TPR;
            if (c < n4) {
                vec4 xc = xv[u], gc = gv[u], wc = wv[u];
                if (u0 != 0u) {
                    xc = uintBitsToFloat(x4.v[x0 + c]);
                    gc = uintBitsToFloat(g4.v[c]);
                    wc = live ? uintBitsToFloat(w4.v[w0 + c]) : vec4(0.0);
                }
                precise vec4 y = (xc * r) * gc;
                sum += dot(wc, y);
            }
        }
    }
    return sum;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint lane = tid % TPR;
    uint r = wg_linear() * (WG / TPR) + tid / TPR;
    uint t0 = gl_WorkGroupID.y * NT;
    bool live = r < pc.nrows && t0 < pc.ntok;
    uint row_byte = r * pc.row_bytes;
    uint nblocks = pc.ncols / BLOCK_ELEMS;

    // has_rs with TPR > 1: token t0's partial sums loaded now, one an invocation (in flight
    // through the products; parts_scale's loads one after another cost microseconds), and
    // added in block order after them.
    uint nbp = pc.ncols / 256u;
    bool rs_wide = TPR > 1u && pc.has_rs != 0u && nbp <= min(WG, 64u);
    float part_h = 0.0, part_l = 0.0;
    if (rs_wide && tid < nbp) {
        uint at = 2u * (t0 * nbp + tid);
        part_h = pc.rs.v[at];
        part_l = pc.rs.v[at + 1u];
    }
    if (TPR == 1u) {
        // One row, NT tokens: every weight element is decoded once and used NT times.
        if (!live) {
            return;
        }
        float acc[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        uint xo[8];
        [[unroll]] for (uint j = 0u; j < NT; j++) {
            xo[j] = min(t0 + j, pc.ntok - 1u) * pc.ncols; // past the end: recompute the last token
        }
        for (uint b = 0u; b < nblocks; b++) {
            uint bb = block_byte(row_byte, b);
            uint cb = b * BLOCK_ELEMS;
            // Unrolled: the compiler shares the block's header and quant-word loads across
            // its elements (measured 5x faster on lavapipe than a rolled loop).
            [[unroll]] for (uint e = 0u; e < BLOCK_ELEMS; e++) {
                float wv = dequant_block(pc.w, bb, e);
                [[unroll]] for (uint j = 0u; j < NT; j++) {
                    acc[j] += wv * pc.x.v[xo[j] + cb + e];
                }
            }
        }
        [[unroll]] for (uint j = 0u; j < NT; j++) {
            if (t0 + j < pc.ntok) {
                pc.y.v[(t0 + j) * pc.nrows + r] = acc[j] * token_scale(t0 + j);
            }
        }
        return;
    }

    if (NT > 1u && V4 == 1u && ROUTE == 0u) {
        // TPR > 1 with V4, no has_rs (the host checks that): a row's TPR lanes take it for NT
        // tokens at once, each weight vector loaded once for all of them (a prompt's MoE router:
        // one token a workgroup read the whole 1 MiB router from L2 once per token). Each
        // token's sum adds the same vectors in the same order as the one-token V4 path below,
        // and meets its lanes the same way: the same bits.
        float s[8];
        [[unroll]] for (uint j = 0u; j < NT; j++) {
            s[j] = 0.0;
        }
        if (live) {
            Quads w4 = Quads(pc.w);
            Quads x4 = Quads(pc.x);
            uint w0 = row_byte / 16u;
            uint n4 = pc.ncols / 4u;
            uint x0[8];
            [[unroll]] for (uint j = 0u; j < NT; j++) {
                x0[j] = min(t0 + j, pc.ntok - 1u) * n4; // past the end: the last token again
            }
            for (uint c = lane; c < n4; c += TPR) {
                vec4 wv = uintBitsToFloat(w4.v[w0 + c]);
                [[unroll]] for (uint j = 0u; j < NT; j++) {
                    s[j] += dot(wv, uintBitsToFloat(x4.v[x0[j] + c]));
                }
            }
        }
        [[unroll]] for (uint j = 0u; j < NT; j++) {
            if (j > 0u && row_sum_shared()) {
                barrier(); // the token before's tree is read
            }
            float tot = row_sum(s[j], tid, lane);
            if (lane == 0u && live && t0 + j < pc.ntok) {
                pc.y.v[(t0 + j) * pc.nrows + r] = tot;
            }
        }
        return;
    }

    // A row's TPR lanes walk it together: on blocks of at least TPR elements, all lanes share a
    // block (neighbouring lanes read neighbouring bytes, and the block's scales come from one
    // cache line); smaller blocks (f32, f16) are strided by element.
    float sum = 0.0;
    if (SN == 1u) {
        sum = sn_dot(tid, lane, live, row_byte, t0);
    } else if (live) {
        uint xo = t0 * pc.ncols;
        if (BLOCK_ELEMS >= TPR) {
            // Each lane takes PER consecutive elements of the block, unrolled, so the scales of
            // its sub-block and its quant words are decoded once for all of them.
            const uint PER = BLOCK_ELEMS / TPR;
            uint e0 = lane * PER;
            for (uint b = 0u; b < nblocks; b++) {
                uint bb = block_byte(row_byte, b);
                uint xb = xo + b * BLOCK_ELEMS + e0;
                [[unroll]] for (uint i = 0u; i < PER; i++) {
                    sum += dequant_block(pc.w, bb, e0 + i) * pc.x.v[xb + i];
                }
            }
        } else if (V4 == 1u) {
            Quads w4 = Quads(pc.w);
            Quads x4 = Quads(pc.x);
            uint w0 = row_byte / 16u;
            uint x0 = xo / 4u;
            // V4_AHEAD vectors' loads in flight before their products (one after another, each
            // load waited for before the next was issued: a row of 2,048 f32 took eight memory
            // round trips a lane, the MoE router's whole critical path); the sum still adds
            // vectors c, c + TPR, … in that order, as before.
            const uint V4_AHEAD = 8u;
            uint n4 = pc.ncols / 4u;
            uint c = lane;
            for (; c + (V4_AHEAD - 1u) * TPR < n4; c += V4_AHEAD * TPR) {
                vec4 wv[V4_AHEAD], xv[V4_AHEAD];
                [[unroll]] for (uint u = 0u; u < V4_AHEAD; u++) {
                    wv[u] = uintBitsToFloat(w4.v[w0 + c + u * TPR]);
                    xv[u] = uintBitsToFloat(x4.v[x0 + c + u * TPR]);
                }
                [[unroll]] for (uint u = 0u; u < V4_AHEAD; u++) {
                    sum += dot(wv[u], xv[u]);
                }
            }
            for (; c < n4; c += TPR) {
                sum += dot(uintBitsToFloat(w4.v[w0 + c]), uintBitsToFloat(x4.v[x0 + c]));
            }
        } else {
            for (uint c = lane; c < pc.ncols; c += TPR) {
                sum += dequant(pc.w, row_byte, c) * pc.x.v[xo + c];
            }
        }
    }
    float total = row_sum(sum, tid, lane);
    // Marks 2–5 here and route.glsl's 6–7 (the router's stage has norm_quant's 0–1).
    CLK_MARK(2); // the rows' products
    float rsc = 1.0;
    if (rs_wide) {
        if (tid < nbp) {
            rs_hi[tid] = part_h;
            rs_lo[tid] = part_l;
        }
        barrier();
        precise float hi = 0.0;
        precise float lo = 0.0;
        for (uint b = 0u; b < nbp; b++) {
            two_sum_into(hi, lo, rs_hi[b], rs_lo[b]);
        }
        rsc = mean_scale(hi, lo, pc.ncols, pc.eps);
    } else if (pc.has_rs != 0u) {
        rsc = token_scale(t0);
    }
    if (lane == 0u && live) {
        float v = total * rsc;
        if (RT_ON == 1u) {
            CFloats(pc.y).v[t0 * pc.nrows + r] = v;
        } else {
            pc.y.v[t0 * pc.nrows + r] = v;
        }
    }
    if (RT_ON == 0u) {
        return;
    }
    uint kk = min(pc.k, pc.nrows);
    if (RT_STOP == 2u) {
        if (tid == 0u && wg_linear() == 0u) {
            for (uint j = 0u; j < kk; j++) {
                pc.ids.v[t0 * pc.k + j] = j;
                pc.wts.v[t0 * pc.k + j] = 1.0 / float(kk);
            }
        }
        return;
    }
    memoryBarrierBuffer(); // this workgroup's logits are visible before it is counted
    barrier();
    if (tid == 0u) {
        uint total = gl_NumWorkGroups.x * gl_NumWorkGroups.z;
        rt_last = atomicAdd(pc.cnt.v[t0], 1u) == total - 1u ? 1u : 0u;
    }
    barrier();
    if (rt_last == 0u) {
        return; // uniform over the workgroup
    }
    CLK_MARK(3); // counted, and the last
    if (RT_STOP != 7u) {
        memoryBarrierBuffer(); // and the others' are seen
    }
    if (RT_STOP == 0u || RT_STOP >= 4u) {
        route_token(t0 * pc.nrows, pc.nrows, kk, pc.renorm);
    }
    CLK_MARK(4); // ranked
    // Pick j written by invocation j (kk ≤ RT_MAXK = 64 ≤ WG).
    uint j = tid;
    if (j < kk) {
        uint e = j;
        if (RT_STOP == 0u || RT_STOP == 5u) {
            e = rt_sel_e[j];
        } else if (RT_STOP == 3u) {
            uint bits = floatBitsToUint(RT_LOGIT(t0 * pc.nrows + j));
            e = min(16u * j + ((bits >> 9) & 15u), pc.nrows - 1u);
        }
        pc.ids.v[t0 * pc.k + j] = e;
        pc.wts.v[t0 * pc.k + j] = RT_STOP == 0u || RT_STOP == 5u ? rt_w : 1.0 / float(kk);
    }
    if (tid == 0u) {
        pc.cnt.v[t0] = 0u; // ready for the next dispatch
    }
    CLK_MARK(5); // the picks written
}
