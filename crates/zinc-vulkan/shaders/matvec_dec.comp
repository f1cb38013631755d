#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_buffer_reference_uvec2 : require
// matvec_dec.comp — Y = W·X for decode steps (a token per workgroup column) on K-quant weights
// (Q4_K, Q6_K), with integer dot products on activations quantized by quant_act.comp / the
// norm and activation kernels (Q8_K mode: one scale per 256 elements).
//
// The arithmetic and output of matvecq.comp for NT = 1 (push constants below); what differs
// is how lanes meet memory. In matvecq a lane owns whole units, so the lanes of one load
// instruction touch addresses a unit apart; here eight neighbouring lanes split every 256-
// element block into eight 16-byte pieces of its quants, so a subgroup's load reads
// consecutive bytes of consecutive blocks (coalesced), and the activations each lane needs
// are the matching 16-byte pieces. Every lane also reads its block's small header (scales),
// shared by its eight lanes.
//
// Per format, lane piece p (0..7) of a block:
//   Q4_K (144-byte blocks: d, dmin, 12 scale bytes, 128 qs bytes): qs bytes 16p .. 16p + 15 of
//     the quants; their low nibbles are elements 64(p/2) + 16(p%2) + 0..15 (sub-block p/2·2),
//     high nibbles the same + 32 (sub-block p/2·2 + 1).
//   Q6_K (dequant.glsl's grouped device layout: a block's 128 ql, 64 qh, 16 scales 16-byte
//     aligned at q6_body, its d in its group's vector of eight d): half n = p/4,
//     ql bytes 64n + 16(p%4) .. + 15 and qh bytes 32n + 16(p%2) .. + 15; with l = 16(p%2) + i,
//     low nibbles are quarter (p%4)/2 (elements 128n + 32·((p%4)/2) + l), high nibbles
//     quarter (p%4)/2 + 2, the two qh bits of quarter q at 2q.
//
// Buffers and push constants: as matvecq.comp (w, xq, xs, y, ncols, nrows, row_bytes, ntok,
//   accumulate; ncols a multiple of 256) with, after y, moe_matvecq.comp's ids and scale and the
//   slots' routing weights wts (MOE 2), and after accumulate its expert stride (in 16-byte
//   units here), k and row0, read with MOE only (x_per_slot and has_scale are flag bits) but
//   for early weights (MOE 0: WAIT's slot in ids, epoch in k, touch loads in expert16; a FUSE
//   producer's slot in scale, epoch in row0).
// Specialization constants: 0 = WG, the workgroup size (default 128; a multiple of 64, except
//   in the MOE 2 form: LPR times its groups); 1 =
//   LPR, lanes per group of rows (a power of two, LPB ≤ LPR ≤ WG, default 32): LPR / LPB blocks
//   of a row at a time; 2 = NR, consecutive rows per group (1..8, default 1), each lane's loads
//   of the NR rows in flight together against one read of the activations; 3 = MOE, 1: the
//   workgroup column is an MoE slot s (ntok = the slots) and the rows are rows row0 + r of
//   expert ids[s] times input x_per_slot ? s : s / k, scaled by scale[e] where has_scale:
//   moe_matvecq.comp's contract (accumulate 0), for decode steps; 2: the workgroup column is a
//   token t (ntok = the tokens) and each row is Σ over its k slots s = t·k + j of wts[s] ·
//   (scale[ids[s]] where has_scale) · (row of expert ids[s]) · (input x_per_slot ? s : t):
//   moe_combine.comp fused into the down-projection (accumulate as for dense rows). A
//   workgroup then holds NR rows, its WG / LPR (≤ 8) groups of lanes taking slots j, j + WG / LPR,
//   … (weighted before each group's reduction), the groups' sums added in group order (slot
//   order for up to 8 slots); 4 = PB, pieces of a block
//   per lane (1, 2 or 4, default 1): LPB = 8 / PB lanes share a block, lane j of them taking
//   pieces j, j + LPB, … (each piece's loads still coalesce across the LPB lanes), so a lane
//   has PB · 16 bytes of each row's quants in flight a pass; LPR ≥ LPB. Bits 4–7 of the same
//   constant: PASSES − 1, passes (LPR / LPB blocks of a row each) whose loads a lane issues
//   before their math (1, 2 or 4; a pass past the row's end reads a block of the first and adds
//   nothing, so the sums keep their order and bits). Bit 8, PAIR (Q4_K at PB 2): a lane's two
//   pieces are the two halves of one pair of sub-blocks (pieces 2j, 2j + 1 of lane j of a block
//   instead of j, j + 4), so it decodes their scales, loads their activation sums and scales
//   the product once for both (its integer sums are the same; its float sum rounds once where
//   the two pieces rounded twice). Q6_K at PB 2 likewise: a lane's pieces are the two quarter
//   pairs of one half that share their high bits (pieces 4n + l and 4n + l + 2 of lane
//   j = 2n + l), their qh piece loaded once and their four quarters scaled once. (Each workgroup routing
//   its token itself from the router's logits measured 149.5 against 205 tok/s on the H200,
//   Qwen3-30B-A3B, and was removed.)
// Then Floats nz; Words side; Floats g; Words cnt; float eps; uint flags (bits 2 and 3:
//   x_per_slot, has_scale). Specialization constant 5, NORM: bit 0, FUSE (a MOE 0 or 2
//   form with accumulate; nrows a multiple of 256, each workgroup's rows within one 256-row
//   block, WG a multiple of 64): the rows, once stored, also feed the next RMSNorm — the last
//   workgroup of each (token, 256-row block) writes the block's pieces of it (fuse_block), and
//   the reader never waits for a separate norm dispatch. Bit 1, RS: the input is such a norm's
//   z quantized, and each token's results take its scale r (dfloat.glsl's parts_scale of nz).
//   Bit 2, GLU (a MOE 0 or 1 form of a gated FFN's gate or up projection, accumulate 0, nrows
//   a multiple of 256, each workgroup's rows within one 256-row block, WG a multiple of 64):
//   the gate and up dispatches store into the two halves of one buffer (y is the first half
//   in the gate's dispatch, the second in the up's: flag 32), and the last workgroup of each
//   (token, 256-row block) of both writes act(gate) ⊙ up to wts (glu_block) with its
//   quantization to side — glu_quant.comp's work without a dispatch of its own. GLU may go
//   with RS (its rows are stored already scaled). Bit 3, GROWS (a MOE 0 or 1 form of a gated
//   FFN's gate and up projections in one dispatch, accumulate 0, NR ≤ 4, (WG / LPR)·NR = 32):
//   each group of lanes takes its NR rows of the gate (w) and the same rows of the up
//   projection (its row 0, expert 0, at nz; its expert scales at cnt, flag 64, or with RS the
//   norm's parts at cnt instead of nz, and no up scales), and the
//   workgroup computes act(gate) ⊙ up for its 32 rows into wts and quantizes them as one
//   Q8_0-style chunk (quant8.glsl's mode 1) into side itself: no counter, no other workgroup's
//   rows, y untouched. Bit 4, X32: the input's chunk scales are each chunk's own (mode 1, as
//   GROWS writes), not its 256-block's: each 32-element chunk's integer sum takes its own d.
//   Bit 6, TWO (MOE 0, alone or with X32; accumulate 0): two weights of this format and width
//   read the same input in one dispatch — a decode step's q and k, say, one dispatch's start
//   where two took two (H100, session 32: a stage's second dispatch started ~0.9 µs after its
//   first). The first pc.nrows rows' workgroups come first; the rest take the second weight
//   (at ids, row0 rows, its output at wts), each row the same arithmetic as alone.
//   Bit 5, WAIT (early weights: MOE 0, alone or with FUSE, RS or GROWS but not GLU or X32, one
//   token, ncols ≤ WAIT_COLS, which the host checks): the dispatch is recorded beside its
//   input's producer, with no barrier between them. Each workgroup first loads its rows' bytes
//   (min(expert16, TOUCH_LOADS) 32-byte pieces an invocation), so that they are in its cache
//   when the products read them, then waits for the producer's
//   signal (sync.glsl: the slot's address in `ids`, the epoch in `k`), then copies the input
//   row into shared memory through coherent loads (with RS the norm's partial sums too), and
//   the products read it from there. A FUSE dispatch of MOE 0 whose `row0` is not 0 is itself
//   such a producer: the last workgroup of each block signals (slot at `scale`, epoch `row0`)
//   once the block's pieces of the next norm are stored.
// Dispatch: (ntok, min(G, 65535), ceil(G / 65535)) with G = ceil(nrows / (WG / LPR · NR))
//   (under TWO the sum of both weights' G),
//   with MOE 2 G = ceil(nrows / NR).

#include "common.glsl"
#include "dequant.glsl"
#include "dotq.glsl"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint LPR = 32;
layout(constant_id = 2) const uint NR = 1;
layout(constant_id = 3) const uint MOE = 0;
// 4 = PB, the passes (below) less one in bits 4–7, and PAIR in bit 8.
layout(constant_id = 4) const uint PBX = 1;
const uint PB = PBX & 15u;
const uint PASSES = ((PBX >> 4) & 15u) + 1u;
const bool PAIR = (PBX & 256u) != 0u;
// 5 = NORM: bit 0 FUSE, bit 1 RS (below; specialized so that kernels without them carry none of
// their code or registers).
layout(constant_id = 5) const uint NORM = 0;
const bool FUSE = (NORM & 1u) != 0u;
const bool RS = (NORM & 2u) != 0u;
const bool GLU = (NORM & 4u) != 0u;
const bool GROWS = (NORM & 8u) != 0u;
const bool X32 = (NORM & 16u) != 0u;
const bool WAIT = (NORM & 32u) != 0u;
const bool TWO = (NORM & 64u) != 0u;
const uint HAS_WAIT = (NORM >> 5) & 1u;
const uint WAIT_COLS = 4096u; // the widest input WAIT stages in shared memory
const uint TOUCH_LOADS = 8u;
const uint NRT = GROWS ? 2u * NR : NR; // row sums a group: the gate's, then (GROWS) the up's
const uint LPB = 8u / PB; // lanes per block
layout(local_size_x_id = 0) in;

// y's rows under FUSE and GLU go through coherent stores: the block's last workgroup reads them.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CFloats { float v[]; };

layout(push_constant, std430) uniform PC {
    Words w;
    Words xq;
    Floats xs;
    Floats y;
    Words ids;     // MOE
    Floats scale;  // MOE, where has_scale
    Floats wts;    // MOE 2: each slot's routing weight
    uint ncols;
    uint nrows;
    uint row_bytes;
    uint ntok;
    uint accumulate;
    uint expert16; // MOE: an expert's bytes / 16
    uint k;        // MOE
    uint row0;
    Floats nz;     // FUSE: the next RMSNorm's z; RS: the input norm's partial sums (not
                   // under GROWS); GROWS: the up projection's row 0 (expert 0)
    Words side;    // FUSE: that norm's q (n bytes), s (n / 2 bytes) and partials, in a row;
                   // GLU: the activation's q and s, in a row
    Floats g;      // FUSE: its weight; GLU: GELU's table (act.glsl)
    Words cnt;     // FUSE, GLU: a counter per (token, 256-row block), zero between dispatches;
                   // GROWS: the up's expert scales (flag 64), or with RS the norm's partials
    float eps;     // RS: the input norm's epsilon
    uint flags;    // 4 x_per_slot, 8 has_scale (MOE); GLU: 16 GELU (else SiLU), 32 the up
                   // projection's dispatch (y the second half), bits 8-9 the activation's
                   // quantization mode (quant8.glsl)
} pc;

bool x_per_slot() {
    return (pc.flags & 4u) != 0u;
}

bool has_scale() {
    return (pc.flags & 8u) != 0u;
}


layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4s { vec4 v[]; };
// The weights and the quantized input, read-only and unaliased within a dispatch (NonWritable
// members, RestrictPointer variables), so the compiler may take its read-only load path and
// order their loads freely.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer RQuads { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer RVec4s { vec4 v[]; };
// WAIT: the producer's output, written by another dispatch running beside this one.
layout(buffer_reference, std430, buffer_reference_align = 16) coherent readonly buffer CQuads { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) coherent readonly buffer CVec4s { vec4 v[]; };
// WAIT: the input row's quants and chunk floats (1 element in other variants).
shared uvec4 wait_q[1u + (WAIT_COLS / 16u - 1u) * HAS_WAIT];
shared vec4 wait_s[1u + (WAIT_COLS / 32u - 1u) * HAS_WAIT];

// FUSE and RS's shared memory only in their variants (1-element arrays otherwise).
const uint HAS_NORM = ((NORM & 3u) + 2u) / 3u; // 1 where FUSE or RS
#define Q8_WG (1u + ((NORM & 1u) | ((NORM >> 2) & 1u) | ((NORM >> 3) & 1u)) * (WG - 1u))
#include "dfloat.glsl"
#include "quant8.glsl"
#include "act.glsl"
#include "sync.glsl"

shared float gsum[WG];
shared uint f_last;
shared float f_hi[1u + HAS_NORM * 63u];
shared float f_lo[1u + HAS_NORM * 63u];

// The output main stores its rows to: y, or under TWO the second weight's (wts).
Floats y_out;

// y[at] = total (or += with accumulate); coherent under FUSE.
void store_y(uint at, float total) {
    float v = pc.accumulate == 1u ? y_out.v[at] + total : total;
    if (FUSE || GLU) {
        CFloats(y_out).v[at] = v;
    } else {
        y_out.v[at] = v;
    }
}

// A device address (as uvec2: low, high) plus `bytes`.
uvec2 offset_addr(uvec2 a, uint bytes) {
    uint lo = a.x + bytes;
    return uvec2(lo, a.y + (lo < a.x ? 1u : 0u));
}

// A device address (as uvec2: low, high) minus `bytes`.
uvec2 back_addr(uvec2 a, uint bytes) {
    return uvec2(a.x - bytes, a.y - (a.x < bytes ? 1u : 0u));
}

// FUSE: called by every invocation once this workgroup has stored rows r_lo .. r_lo + n − 1 of
// token t (all in one 256-row block). The block's last workgroup to finish (a counter,
// device-scope atomics) computes the next RMSNorm's pieces of the block: its sum of squares,
// z = y ⊙ g and z quantized (Q8_K: RMSNorm's scale r is one factor per row, so round(z·127/
// amax) are the very quants of r·z and only the block scale lacks r, which the reader applies).
void fuse_block(uint t, uint r_lo, uint nr, uint tid) {
    uint nblk = pc.nrows / 256u;
    uint n = pc.ntok * pc.nrows; // the side buffer: q at byte 0, s at n, the partials at 3n / 2
    Words fq = pc.side;
    Floats fs = Floats(offset_addr(uvec2(pc.side), n));
    Floats fp = Floats(offset_addr(uvec2(pc.side), 3u * n / 2u));
    uint slot = t * nblk + r_lo / 256u;
    memoryBarrierBuffer(); // this workgroup's rows are visible before it is counted
    barrier();
    if (tid == 0u) {
        uint done = atomicAdd(pc.cnt.v[slot], nr);
        f_last = done + nr == 256u ? 1u : 0u;
    }
    barrier();
    if (f_last == 0u) {
        return; // uniform over the workgroup
    }
    memoryBarrierBuffer(); // and the others' are seen
    bool live = tid < 64u;
    uint j = (r_lo / 256u) * 256u + 4u * tid; // the row within the token
    uint e0 = t * pc.nrows + j;
    vec4 z = vec4(0.0);
    precise float hi = 0.0;
    precise float lo = 0.0;
    if (live) {
        CFloats cy = CFloats(pc.y);
        vec4 v, g;
        [[unroll]] for (uint k = 0u; k < 4u; k++) { // every load in flight before the math
            v[k] = cy.v[e0 + k];
            g[k] = pc.g.v[j + k];
        }
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            add_square(hi, lo, v[k]);
            z[k] = v[k] * g[k];
            pc.nz.v[e0 + k] = z[k];
        }
        f_hi[tid] = hi;
        f_lo[tid] = lo;
    }
    for (uint st = 32u; st > 0u; st >>= 1) {
        barrier();
        if (tid < st) {
            float h2 = f_hi[tid], l2 = f_lo[tid];
            two_sum_into(h2, l2, f_hi[tid + st], f_lo[tid + st]);
            f_hi[tid] = h2;
            f_lo[tid] = l2;
        }
    }
    barrier();
    if (tid == 0u) {
        fp.v[2u * slot] = f_hi[0];
        fp.v[2u * slot + 1u] = f_lo[0];
        pc.cnt.v[slot] = 0u; // ready for the next dispatch
    }
    quant_word(tid, z, e0, live, 2u, fq, fs);
    // Early weights: the norm's readers beside this dispatch wait for its every block (MOE 0
    // only: the slot's address in `scale`, the epoch in `row0`; 0 where none waits).
    if (MOE == 0u && pc.row0 != 0u) {
        sync_signal(Words(uvec2(pc.scale)), pc.row0, pc.ntok * nblk, tid);
    }
}
// GLU: called by every invocation once this workgroup has stored rows r_lo .. r_lo + n − 1 of
// token (MOE 1: slot) t, all in one 256-row block, of the gate or the up projection (two
// dispatches, one buffer's two halves). The block's last workgroup of both (a counter reaching 512 rows,
// device-scope atomics) computes act(gate) ⊙ up for the block and quantizes it for the down-
// projection — glu_quant.comp's arithmetic, element for element, so the same bits.
void glu_block(uint t, uint r_lo, uint nr, uint tid) {
    uint nblk = pc.nrows / 256u;
    uint n = pc.ntok * pc.nrows; // each half of nz; the side buffer: q at byte 0, s at n
    Floats fs = Floats(offset_addr(uvec2(pc.side), n));
    uint slot = t * nblk + r_lo / 256u;
    memoryBarrierBuffer(); // this workgroup's rows are visible before it is counted
    barrier();
    if (tid == 0u) {
        uint done = atomicAdd(pc.cnt.v[slot], nr);
        f_last = done + nr == 512u ? 1u : 0u;
    }
    barrier();
    if (f_last == 0u) {
        return; // uniform over the workgroup
    }
    memoryBarrierBuffer(); // and the others' are seen
    bool live = tid < 64u;
    uint e0 = t * pc.nrows + (r_lo / 256u) * 256u + 4u * tid;
    vec4 v = vec4(0.0);
    if (live) {
        uvec2 y0 = uvec2(pc.y);
        CFloats gu = CFloats((pc.flags & 32u) != 0u ? back_addr(y0, 4u * n) : y0);
        vec4 gv, uv;
        [[unroll]] for (uint k = 0u; k < 4u; k++) { // every load in flight before the math
            gv[k] = gu.v[e0 + k];
            uv[k] = gu.v[n + e0 + k];
        }
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            float a = (pc.flags & 16u) != 0u ? gelu(pc.g, gv[k]) : silu(gv[k]);
            v[k] = a * uv[k];
            pc.wts.v[e0 + k] = v[k];
        }
    }
    if (tid == 0u) {
        pc.cnt.v[slot] = 0u; // ready for the next dispatch
    }
    quant_word(tid, v, e0, live, (pc.flags >> 8) & 3u, pc.side, fs);
}

shared float msum[64]; // MOE 2: per group (≤ 8) and row, its slots' weighted sum
// GROWS: the workgroup's 32 gate sums, then its 32 up sums (1 element in other variants).
const uint HAS_GROWS = (NORM >> 3) & 1u;
shared float grow_v[1u + 63u * HAS_GROWS];

// The LPR lanes of a group sum `v` (lane 0 of the group has the total).
float group_sum(float v, uint tid, uint lane) {
    if (gl_SubgroupSize >= LPR) {
        [[unroll]] for (uint s = LPR / 2u; s > 0u; s >>= 1) {
            v += subgroupShuffleXor(v, s);
        }
        return v;
    }
    barrier(); // the previous row's sums have been read
    gsum[tid] = v;
    for (uint s = LPR / 2u; s > 0u; s >>= 1) {
        barrier();
        if (lane < s) {
            gsum[tid] += gsum[tid + s];
        }
    }
    barrier();
    return gsum[tid];
}

#if defined(TYPE_Q4_K)
// get_scale_min_k4 for sub-block j of the 12 scale bytes in h.yzw.
uvec2 k4_scale_min(uvec4 h, uint j) {
    uint s[3] = uint[3](h.y, h.z, h.w);
    return scale_min(s, j);
}
#endif

// The input's 16-byte quants i and chunk floats i (their row starting at xw0 and xc0): from
// memory, or under WAIT from the row staged in shared memory.
#define AQ(i) (WAIT ? wait_q[(i) - xw0] : aq.v[i])
#define SQ(i) (WAIT ? wait_s[(i) - xc0] : sq.v[i])

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint lane = tid % LPR;
    uint wgi = gl_WorkGroupID.y + gl_WorkGroupID.z * 65535u;
    // TWO: the workgroups past the first weight's take the second weight's rows.
    uint nrows = pc.nrows;
    Words wsrc = pc.w;
    y_out = pc.y;
    if (TWO) {
        const uint RPW = (WG / LPR) * NR; // rows a workgroup
        uint g1 = (pc.nrows + RPW - 1u) / RPW;
        if (wgi >= g1) { // uniform over the workgroup
            wgi -= g1;
            nrows = pc.row0;
            wsrc = pc.ids;
            y_out = pc.wts;
        }
    }
    uint grp = tid / LPR; // this invocation's group of lanes
    // Rows r0 .. r0 + NR − 1 a group; with MOE 2 a workgroup's, its groups taking the slots.
    uint r0 = MOE == 2u ? wgi * NR : (wgi * (WG / LPR) + grp) * NR;
    uint t = gl_WorkGroupID.x; // a token, or with MOE 1 a slot
    bool live = r0 < nrows && t < pc.ntok;
    float acc[8];
    [[unroll]] for (uint k = 0u; k < NRT; k++) {
        acc[k] = 0.0;
    }
    // RS: the input row's partial sums, loaded now (one a lane, in flight through the products)
    // and added after them. (Loaded one after another at the end, they cost the H200 ~4 µs a
    // dispatch.)
    bool rs = RS;
    uint nbp = pc.ncols / 256u;
    bool rs_wide = nbp <= min(WG, 64u);
    uint xrow_rs = MOE == 1u && !x_per_slot() ? t / pc.k : t;
    float part_h = 0.0, part_l = 0.0;
    // RS's norm parts: at nz, or at cnt under GROWS (whose nz is the up projection).
    Floats parts = Floats(GROWS ? uvec2(pc.cnt) : uvec2(pc.nz));
    if (rs && rs_wide && tid < nbp && !WAIT) {
        uint at = 2u * (xrow_rs * nbp + tid);
        part_h = parts.v[at];
        part_l = parts.v[at + 1u];
    }
    // MOE 1: the slot's expert.
    uint e1 = 0u;
    if (MOE == 1u && live) {
        e1 = pc.ids.v[t];
    }
    restrict RQuads wq = RQuads(wsrc);
    // GROWS: the up projection's rows (row 0 of expert 0 at nz), and its words for Q6_K's d.
    restrict RQuads wq2 = RQuads(GROWS ? uvec2(pc.nz) : uvec2(wsrc));
    Words wd2 = Words(GROWS ? uvec2(pc.nz) : uvec2(wsrc));
    restrict RQuads aq = RQuads(pc.xq);
    restrict RVec4s sq = RVec4s(pc.xs);
    uint nblocks = pc.ncols / 256u;
    // WAIT: the workgroup's rows' bytes loaded (into the cache) while the producer runs, every
    // load issued before any is used; then the producer awaited and the input row staged.
    uint touch = 0u;
    bool waited = true;
    if (WAIT) {
        uint rw0 = wgi * (WG / LPR) * NR;
        uint rw1 = min(rw0 + (WG / LPR) * NR, nrows);
        uint p0 = rw0 * pc.row_bytes / 32u;                            // 32-byte pieces
        uint p1 = max((rw1 * pc.row_bytes + 31u) / 32u, p0 + 1u);
        restrict RQuads tw = RQuads(wsrc);
        uint tv[TOUCH_LOADS];
        uint nt = min(pc.expert16, TOUCH_LOADS); // (MOE 0: expert16 is WAIT's touch count)
        [[unroll]] for (uint i = 0u; i < TOUCH_LOADS; i++) {
            tv[i] = i < nt ? tw.v[2u * min(p0 + tid + i * WG, p1 - 1u)].x : 0u;
        }
        waited = sync_wait(pc.ids, pc.k, wgi, tid);
        [[unroll]] for (uint i = 0u; i < TOUCH_LOADS; i++) {
            touch ^= tv[i];
        }
        restrict CQuads cq = CQuads(pc.xq);
        restrict CVec4s cs = CVec4s(pc.xs);
        uint nq = pc.ncols / 16u, nc = pc.ncols / 32u;
        for (uint i = tid; i < nq; i += WG) {
            wait_q[i] = cq.v[t * nq + i];
        }
        for (uint i = tid; i < nc; i += WG) {
            wait_s[i] = cs.v[t * nc + i];
        }
        if (RS && tid < nbp) { // the norm's partial sums, written beside this dispatch too
            CFloats cp = CFloats(uvec2(parts));
            uint at = 2u * (t * nbp + tid);
            part_h = cp.v[at];
            part_l = cp.v[at + 1u];
        }
        barrier();
    }
    // MOE 2: token t's slots grp, grp + WG / LPR, …, each weighted before the rows' sums.
    uint nslot = MOE == 2u ? pc.k : 1u;
    uint sstep = MOE == 2u ? WG / LPR : 1u;
    for (uint si = MOE == 2u ? grp : 0u; si < nslot; si += sstep) {
        // With MOE: the slot's expert (its rows from quad `wbase`) and input row.
        uint wbase = 0u, xrow = t, first = 0u;
        float sw = 1.0; // MOE 2: the slot's routing weight (times its expert's scale)
        if (MOE == 1u && live) {
            wbase = e1 * pc.expert16;
            xrow = x_per_slot() ? t : t / pc.k;
            first = pc.row0;
        }
        if (MOE == 2u && live) {
            uint s = t * pc.k + si;
            uint ex = pc.ids.v[s];
            wbase = ex * pc.expert16;
            xrow = x_per_slot() ? s : t;
            first = pc.row0;
            float wt = pc.wts.v[s];
            sw = wt * (has_scale() ? pc.scale.v[ex] : 1.0);
        }
        uint rowb[8];
        float part[8];
        [[unroll]] for (uint k = 0u; k < NRT; k++) {
            // Past the end: results dropped. (GROWS: rows k − NR of the up from k = NR.)
            rowb[k] = (first + min(r0 + k % NR, nrows - 1u)) * pc.row_bytes;
            part[k] = 0.0;
        }
        uint xw0 = xrow * (pc.ncols / 16u); // the input row's activations, in 16-byte units
        uint xc0 = xrow * (pc.ncols / 32u); // its chunk floats, in vec4s
        if (live) {
            // A pass: LPR / LPB blocks of the row, PB pieces of each per lane. (Issuing two or
            // more passes' loads before their math measured slower on the H200: Qwen3-8B decode
            // 209 → 204, 181, 168 tok/s for 2, 4, 8 — registers cost more than the loads in
            // flight won.)
            for (uint b0 = lane / LPB; b0 < nblocks; b0 += PASSES * (LPR / LPB)) {
              [[unroll]] for (uint ps = 0u; ps < PASSES; ps++) {
                uint bu = b0 + ps * (LPR / LPB);
                bool inrow = bu < nblocks;
                uint b = inrow ? bu : b0; // past the end: a block of this pass, its sum dropped
#if defined(TYPE_Q4_K)
                if (PAIR) {
                    // Sub-blocks 2g and 2g + 1, elements 64g + 0..31 and + 32..63: quants in
                    // pieces 2g (elements + 0..15) and 2g + 1 (+ 16..31), low nibbles the first
                    // sub-block, high ones the second.
                    uint g = lane % LPB;
                    uint xi = xw0 + (256u * b + 64u * g) / 16u;
                    uvec4 xl0 = AQ(xi);
                    uvec4 xl1 = AQ(xi + 1u);
                    uvec4 xh0 = AQ(xi + 2u);
                    uvec4 xh1 = AQ(xi + 3u);
                    vec4 c0 = SQ(xc0 + 8u * b + 2u * g);
                    vec4 c1 = SQ(xc0 + 8u * b + 2u * g + 1u);
                    int s0 = int(c0.y) + int(c0.z);
                    int s1 = int(c1.y) + int(c1.z);
                    [[unroll]] for (uint k = 0u; k < NRT; k++) {
                        restrict RQuads wk = k < NR ? wq : wq2;
                        uint bq = wbase + ((rowb[k] + b * BLOCK_BYTES) >> 4);
                        uvec4 hd = wk.v[bq];
                        uvec4 q0 = wk.v[bq + 1u + 2u * g];
                        uvec4 q1 = wk.v[bq + 2u + 2u * g];
                        int lo = 0, hi = 0;
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            lo += dp4(q0[i] & LO4, xl0[i]);
                            hi += dp4((q0[i] >> 4) & LO4, xh0[i]);
                            lo += dp4(q1[i] & LO4, xl1[i]);
                            hi += dp4((q1[i] >> 4) & LO4, xh1[i]);
                        }
                        uvec2 sm0 = k4_scale_min(hd, 2u * g);
                        uvec2 sm1 = k4_scale_min(hd, 2u * g + 1u);
                        float d = f16_bits_to_f32(hd.x & 0xFFFFu);
                        float dmin = f16_bits_to_f32(hd.x >> 16);
                        float v;
                        if (X32) { // each sub-block's chunk its own scale
                            v = d * (c0.x * float(int(sm0.x) * lo) + c1.x * float(int(sm1.x) * hi))
                                - dmin * (c0.x * float(int(sm0.y) * s0) + c1.x * float(int(sm1.y) * s1));
                        } else {
                            int sumi = int(sm0.x) * lo + int(sm1.x) * hi;
                            int mins = int(sm0.y) * s0 + int(sm1.y) * s1;
                            v = c0.x * (d * float(sumi) - dmin * float(mins));
                        }
                        part[k] += inrow ? v : 0.0;
                    }
                    continue;
                }
#elif defined(TYPE_Q6_K)
                if (PAIR) {
                    // Lane j of a block: half n = j / 2, l = j % 2, both quants' quarter pairs
                    // (pieces 4n + l and 4n + l + 2: quarters 0 and 2, then 1 and 3, elements
                    // 16l + 0..15 of each), which share their high bits (one qh piece).
                    uint j = lane % LPB;
                    uint n = j / 2u, l = j % 2u;
                    uint xi = xw0 + (256u * b + 128u * n + 16u * l) / 16u;
                    uvec4 xa0 = AQ(xi);      // quarter 0
                    uvec4 xa1 = AQ(xi + 2u); // quarter 1
                    uvec4 xb0 = AQ(xi + 4u); // quarter 2
                    uvec4 xb1 = AQ(xi + 6u); // quarter 3
                    uint ci = xc0 + 8u * b + 4u * n;
                    vec4 cq0 = SQ(ci);
                    vec4 cq1 = SQ(ci + 1u);
                    vec4 cq2 = SQ(ci + 2u);
                    vec4 cq3 = SQ(ci + 3u);
                    int s0 = int(cq0[1u + l]), s1 = int(cq1[1u + l]);
                    int s2 = int(cq2[1u + l]), s3 = int(cq3[1u + l]);
                    uint ja = 8u * n + l; // scales of quarters 0, 1, 2, 3: ja, + 2, + 4, + 6
                    [[unroll]] for (uint k = 0u; k < NRT; k++) {
                        restrict RQuads wk = k < NR ? wq : wq2;
                        uint hb = block_byte(rowb[k], b); // the block's d (dequant.glsl)
                        uint bq = wbase + (q6_body(hb) >> 4);
                        uvec4 ql0 = wk.v[bq + 4u * n + l];
                        uvec4 ql1 = wk.v[bq + 4u * n + l + 2u];
                        uvec4 qh = wk.v[bq + 8u + 2u * n + l];
                        uvec4 sc = wk.v[bq + 12u];
                        uint dw = (k < NR ? wsrc : wd2).v[4u * wbase + (hb >> 2)] >> (8u * (hb & 2u));
                        int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            uint h = qh[i];
                            d0 += dp4((ql0[i] & LO4) | ((h & 0x03030303u) << 4), xa0[i]);
                            d2 += dp4(((ql0[i] >> 4) & LO4) | (((h >> 4) & 0x03030303u) << 4), xb0[i]);
                            d1 += dp4((ql1[i] & LO4) | (((h >> 2) & 0x03030303u) << 4), xa1[i]);
                            d3 += dp4(((ql1[i] >> 4) & LO4) | (((h >> 6) & 0x03030303u) << 4), xb1[i]);
                        }
                        int sa0 = bitfieldExtract(int(sc[ja >> 2]), int((ja & 3u) * 8u), 8);
                        int sa1 = bitfieldExtract(int(sc[(ja + 2u) >> 2]), int(((ja + 2u) & 3u) * 8u), 8);
                        int sb0 = bitfieldExtract(int(sc[(ja + 4u) >> 2]), int(((ja + 4u) & 3u) * 8u), 8);
                        int sb1 = bitfieldExtract(int(sc[(ja + 6u) >> 2]), int(((ja + 6u) & 3u) * 8u), 8);
                        float v;
                        if (X32) { // each quarter's chunk its own scale
                            v = f16_bits_to_f32(dw & 0xFFFFu)
                                * (cq0.x * float(sa0 * (d0 - 32 * s0)) + cq1.x * float(sa1 * (d1 - 32 * s1))
                                    + cq2.x * float(sb0 * (d2 - 32 * s2)) + cq3.x * float(sb1 * (d3 - 32 * s3)));
                        } else {
                            int sum = sa0 * (d0 - 32 * s0) + sa1 * (d1 - 32 * s1)
                                + sb0 * (d2 - 32 * s2) + sb1 * (d3 - 32 * s3);
                            v = cq0.x * f16_bits_to_f32(dw & 0xFFFFu) * float(sum);
                        }
                        part[k] += inrow ? v : 0.0;
                    }
                    continue;
                }
#endif
                [[unroll]] for (uint pp = 0u; pp < PB; pp++) {
                    uint piece = lane % LPB + pp * LPB;
#if defined(TYPE_Q4_K)
                    uint g = piece / 2u, h = piece % 2u;
                    // Elements 64g + 16h + 0..15 (sub-block 2g) and the same + 32 (sub-block 2g + 1).
                    uint e = 256u * b + 64u * g + 16u * h;
                    uvec4 xlo = AQ(xw0 + e / 16u);
                    uvec4 xhi = AQ(xw0 + e / 16u + 2u);
                    vec4 c0 = SQ(xc0 + 8u * b + 2u * g);
                    vec4 c1 = SQ(xc0 + 8u * b + 2u * g + 1u);
                    int s0 = int(c0[1u + h]);
                    int s1 = int(c1[1u + h]);
                    [[unroll]] for (uint k = 0u; k < NRT; k++) {
                        restrict RQuads wk = k < NR ? wq : wq2;
                        uint bq = wbase + ((rowb[k] + b * BLOCK_BYTES) >> 4);
                        uvec4 hd = wk.v[bq];
                        uvec4 q = wk.v[bq + 1u + piece];
                        int lo = 0, hi = 0;
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            lo += dp4(q[i] & LO4, xlo[i]);
                            hi += dp4((q[i] >> 4) & LO4, xhi[i]);
                        }
                        uvec2 sm0 = k4_scale_min(hd, 2u * g);
                        uvec2 sm1 = k4_scale_min(hd, 2u * g + 1u);
                        float d = f16_bits_to_f32(hd.x & 0xFFFFu);
                        float dmin = f16_bits_to_f32(hd.x >> 16);
                        float v;
                        if (X32) { // each sub-block's chunk its own scale
                            v = d * (c0.x * float(int(sm0.x) * lo) + c1.x * float(int(sm1.x) * hi))
                                - dmin * (c0.x * float(int(sm0.y) * s0) + c1.x * float(int(sm1.y) * s1));
                        } else {
                            int sumi = int(sm0.x) * lo + int(sm1.x) * hi;
                            int mins = int(sm0.y) * s0 + int(sm1.y) * s1;
                            v = c0.x * (d * float(sumi) - dmin * float(mins));
                        }
                        part[k] += inrow ? v : 0.0;
                    }
#elif defined(TYPE_Q6_K)
                    uint n = piece / 4u, p = piece % 4u, l = p % 2u, qa = p / 2u;
                    // Quarters qa (low nibbles) and qa + 2 (high nibbles), elements 16l + 0..15 of each.
                    uint e = 256u * b + 128u * n + 32u * qa + 16u * l;
                    uvec4 xa = AQ(xw0 + e / 16u);
                    uvec4 xb = AQ(xw0 + e / 16u + 4u); // + 64 elements: quarter qa + 2
                    vec4 c0 = SQ(xc0 + 8u * b + 4u * n + qa);
                    vec4 c1 = SQ(xc0 + 8u * b + 4u * n + qa + 2u);
                    int s0 = int(c0[1u + l]);
                    int s1 = int(c1[1u + l]);
                    // Scales of the 16-element groups 8n + l + 2qa and + 4 (quarter qa + 2).
                    uint ja = 8u * n + l + 2u * qa;
                    uint jb = ja + 4u;
                    [[unroll]] for (uint k = 0u; k < NRT; k++) {
                        restrict RQuads wk = k < NR ? wq : wq2;
                        uint hb = block_byte(rowb[k], b); // the block's d (dequant.glsl)
                        uint bq = wbase + (q6_body(hb) >> 4);
                        uvec4 ql = wk.v[bq + 4u * n + p];
                        uvec4 qh = wk.v[bq + 8u + 2u * n + l];
                        uvec4 sc = wk.v[bq + 12u]; // 16 scale bytes
                        uint dw = (k < NR ? wsrc : wd2).v[4u * wbase + (hb >> 2)] >> (8u * (hb & 2u));
                        int da = 0, db = 0;
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            uint hq = qh[i] >> (2u * qa);
                            uint va = (ql[i] & LO4) | ((hq & 0x03030303u) << 4);
                            uint vb = ((ql[i] >> 4) & LO4) | (((hq >> 4) & 0x03030303u) << 4);
                            da += dp4(va, xa[i]);
                            db += dp4(vb, xb[i]);
                        }
                        int sa = bitfieldExtract(int(sc[ja >> 2]), int((ja & 3u) * 8u), 8);
                        int sb = bitfieldExtract(int(sc[jb >> 2]), int((jb & 3u) * 8u), 8);
                        float v;
                        if (X32) { // each quarter's chunk its own scale
                            v = f16_bits_to_f32(dw & 0xFFFFu)
                                * (c0.x * float(sa * (da - 32 * s0)) + c1.x * float(sb * (db - 32 * s1)));
                        } else {
                            int sum = sa * (da - 32 * s0) + sb * (db - 32 * s1);
                            v = c0.x * f16_bits_to_f32(dw & 0xFFFFu) * float(sum);
                        }
                        part[k] += inrow ? v : 0.0;
                    }
#else
#error matvec_dec.comp has no variant for this format
#endif
                }
              }
            }
        }
        [[unroll]] for (uint k = 0u; k < NRT; k++) {
            acc[k] += MOE == 2u ? sw * part[k] : part[k];
        }
    } // slots
    CLK_MARK(0); // the products
    if (MOE == 2u) {
        // The groups' weighted sums of each row, added in group (slot) order.
        [[unroll]] for (uint k = 0u; k < NR; k++) {
            float total = group_sum(acc[k], tid, lane);
            if (lane == 0u) {
                msum[grp * NR + k] = total;
            }
        }
        barrier();
        for (uint k = tid; k < NR; k += WG) { // a workgroup smaller than NR takes turns
            uint r = r0 + k;
            if (live && r < nrows) {
                float total = 0.0;
                for (uint g = 0u; g < WG / LPR; g++) {
                    total += msum[g * NR + k];
                }
                store_y(t * nrows + r, total);
            }
        }
        if (FUSE) {
            fuse_block(t, r0, NR, tid);
        }
        return;
    }
    // RS: the input is a fused norm's z, its row's scale applied here (the partial sums added
    // in block order, as parts_scale does).
    float rsc = 1.0;
    if (rs && rs_wide) {
        if (tid < nbp) {
            f_hi[tid] = part_h;
            f_lo[tid] = part_l;
        }
        barrier();
        precise float hi = 0.0;
        precise float lo = 0.0;
        for (uint b = 0u; b < nbp; b++) {
            two_sum_into(hi, lo, f_hi[b], f_lo[b]);
        }
        rsc = mean_scale(hi, lo, pc.ncols, pc.eps);
    } else if (rs) {
        rsc = parts_scale(parts, xrow_rs, pc.ncols, pc.eps);
    }
    if (GROWS) {
        // The group's rows of the gate (k < NR) and of the up (k ≥ NR), with their expert
        // scales, into shared memory; then act(gate) ⊙ up for the workgroup's 32 rows, four a
        // lane of the first 8, stored and quantized as one chunk.
        if (WAIT && touch == 0x9E3779B9u) {
            atomicOr(pc.ids.v[31], 1u); // keeps the touching loads; a word no one reads
        }
        [[unroll]] for (uint k = 0u; k < NRT; k++) {
            float total = group_sum(acc[k], tid, lane) * rsc;
            total = waited ? total : uintBitsToFloat(0x7FC00000u); // WAIT: no signal came (NaN)
            if (lane == 0u) {
                bool up = k >= NR;
                if (MOE == 1u && live && !up && has_scale()) {
                    total *= pc.scale.v[e1];
                }
                if (MOE == 1u && live && up && !RS && (pc.flags & 64u) != 0u) {
                    total *= Floats(uvec2(pc.cnt)).v[e1];
                }
                grow_v[(up ? 32u : 0u) + grp * NR + k % NR] = total;
            }
        }
        barrier();
        CLK_MARK(1); // the rows' sums met
        uint e0 = t * nrows + wgi * 32u + 4u * tid;
        bool qlive = tid < 8u && t < pc.ntok && wgi * 32u < nrows;
        vec4 v = vec4(0.0);
        if (qlive) {
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                float gv = grow_v[4u * tid + i];
                float a = (pc.flags & 16u) != 0u ? gelu(pc.g, gv) : silu(gv);
                v[i] = a * grow_v[32u + 4u * tid + i];
                pc.wts.v[e0 + i] = v[i];
            }
        }
        uint n = pc.ntok * nrows;
        quant_word(tid, v, e0, qlive, 1u, pc.side, Floats(offset_addr(uvec2(pc.side), n)));
        return;
    }
    if (WAIT && touch == 0x9E3779B9u) {
        atomicOr(pc.ids.v[31], 1u); // keeps the touching loads; a word no one reads
    }
    [[unroll]] for (uint k = 0u; k < NR; k++) {
        float total = group_sum(acc[k], tid, lane) * rsc;
        total = waited ? total : uintBitsToFloat(0x7FC00000u); // WAIT: no signal came (NaN)
        uint r = r0 + k;
        if (lane == 0u && live && r < nrows) {
            if (MOE == 1u && has_scale()) {
                total *= pc.scale.v[e1];
            }
            store_y(t * nrows + r, total);
        }
    }
    if (FUSE) {
        fuse_block(t, wgi * (WG / LPR) * NR, (WG / LPR) * NR, tid);
    }
    if (GLU) {
        glu_block(t, wgi * (WG / LPR) * NR, (WG / LPR) * NR, tid);
    }
}
