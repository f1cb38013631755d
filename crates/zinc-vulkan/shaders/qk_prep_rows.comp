#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// qk_prep_rows.comp — qk_prep.comp's work for a prompt's rows (RMSNorm of each query and key
// head where the model has q/k norms, RoPE on both, keys and values stored in the f16 KV
// cache), a subgroup a head instead of a workgroup: no workgroup barriers, and four heads a
// workgroup, so a prompt's ~25,000 heads do not each wait out a workgroup's whole life.
//
// Buffers and push constants: qk_prep.comp's (its `cs` table unused: prompts step their own
// angles, rope.glsl's rope_pair, as rope.comp does).
// The same bits as qk_prep.comp with a workgroup of 64 (and so rms_norm.comp's): the sum of
// squares is rms.glsl's over 64 invocations, replayed — invocation t of that workgroup adds
// x[t], x[t + 64], … in order; its subgroups of S lanes (this one's gl_SubgroupSize, S ≤ 64)
// pair their sums by the butterfly of two_sum_pair, and the 64 / S subgroup totals are paired
// as a tree, lower first. Here lane l plays invocations l, l + S, …, each a sum of its own.
// Workgroup: 128 invocations; items (row, head) 4w .. 4w + 3 of workgroup w, taken by its
//   subgroups in turn (any subgroup size up to 64).
// Dispatch: ceil(nrows · (nq + 2·nk) / 4) workgroups, z-folded; item i = (row i / (nq + 2nk),
//   head i % (nq + 2nk)): query heads, then key heads, then value heads.

#include "common.glsl"

layout(local_size_x = 128) in;

layout(push_constant, std430) uniform PC {
    Floats q;
    Floats k;
    Floats v;
    Floats qw;
    Floats kw;
    Words kc;
    Words vc;
    Words pos;
    uint nq;
    uint nk;
    uint head_dim;
    uint n_rot;
    uint neox;
    float freq_base;
    float freq_scale;
    float eps;
    uint nrows;
    uint flags;
    Floats cs;
} pc;

#define DFLOAT_SHUFFLE 1
#include "dfloat.glsl"
#include "rope.glsl"

const uint ITEMS = 4u;  // heads a workgroup
const uint T = 64u;     // the workgroup qk_prep.comp's sums are replayed for
const uint GMAX = 8u;   // its subgroups, at most (subgroups of 8 lanes or more)
shared float hv[ITEMS * 512u];

void main() {
    uint per_row = pc.nq + 2u * pc.nk;
    uint hd = pc.head_dim;
    uint kv_dim = pc.nk * hd;
    uint S = gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    for (uint it = gl_SubgroupID; it < ITEMS; it += gl_NumSubgroups) {
        uint idx = wg_linear() * ITEMS + it;
        if (idx >= pc.nrows * per_row) {
            break; // uniform over the subgroup
        }
        uint row = idx / per_row;
        uint h = idx % per_row;
        uint p = pc.pos.v[row];
        if (h >= pc.nq + pc.nk) {
            // A value head: straight into the cache.
            uint src = row * kv_dim + (h - pc.nq - pc.nk) * hd;
            uint dst = (p * kv_dim + (h - pc.nq - pc.nk) * hd) / 2u;
            for (uint j2 = lane; j2 < hd / 2u; j2 += S) {
                pc.vc.v[dst + j2] = packHalf2x16(vec2(pc.v.v[src + 2u * j2], pc.v.v[src + 2u * j2 + 1u]));
            }
            continue;
        }
        bool is_q = h < pc.nq;
        Floats t = is_q ? pc.q : pc.k;
        Floats nw = is_q ? pc.qw : pc.kw;
        uint head = is_q ? h : h - pc.nq;
        uint base = row * (is_q ? pc.nq * hd : kv_dim) + head * hd;
        bool norm = (pc.flags & (is_q ? 1u : 2u)) != 0u;
        uint hb = it * 512u;
        for (uint j = lane; j < hd; j += S) {
            hv[hb + j] = t.v[base + j];
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        if (norm) {
            // Invocation tt = lane + S·g of the replayed workgroup: its sum, then the butterfly
            // of its subgroup g (S lanes), then the G = 64 / S totals as a tree.
            uint G = T / min(S, T); // ≤ GMAX: the host takes this kernel for S ≥ 8 only
            float hi[GMAX], lo[GMAX];
            [[unroll]] for (uint g = 0u; g < GMAX; g++) {
                hi[g] = 0.0;
                lo[g] = 0.0;
                if (g < G) {
                    precise float a = 0.0;
                    precise float b = 0.0;
                    for (uint j = lane + S * g; j < hd; j += T) {
                        add_square(a, b, hv[hb + j]);
                    }
                    uint sgs = min(S, T);
                    for (uint st = 1u; st < sgs; st *= 2u) {
                        two_sum_pair(a, b, st, (lane & st) == 0u);
                    }
                    hi[g] = a;
                    lo[g] = b;
                }
            }
            [[unroll]] for (uint st = 1u; st < GMAX; st *= 2u) {
                [[unroll]] for (uint g = 0u; g + st < GMAX; g += 2u * st) {
                    if (g + st < G) {
                        float a = hi[g], b = lo[g];
                        two_sum_into(a, b, hi[g + st], lo[g + st]);
                        hi[g] = a;
                        lo[g] = b;
                    }
                }
            }
            float scale = mean_scale(hi[0], lo[0], hd, pc.eps);
            subgroupBarrier(); // every lane has read hv before any is rewritten
            for (uint j = lane; j < hd; j += S) {
                hv[hb + j] = (hv[hb + j] * scale) * nw.v[j];
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
        }
        // RoPE of each value from its pair (both of a pair compute the pair's rotation, the
        // same bits), stored; a key's f16 pair meets by a shuffle (values j and j ^ 1 are in
        // lanes l and l ^ 1 while S is even).
        uint half_rot = pc.n_rot / 2u;
        uint dst = (p * kv_dim + head * hd) / 2u;
        for (uint j0 = 0u; j0 < hd; j0 += S) {
            uint j = j0 + lane;
            float y = 0.0;
            if (j < hd) {
                y = hv[hb + j];
                if (j < 2u * half_rot) { // an odd n_rot's last dimension stays as it is
                    uint pi = pc.neox != 0u ? j % half_rot : j / 2u;
                    uint a = pc.neox != 0u ? pi : 2u * pi;
                    uint b = pc.neox != 0u ? pi + half_rot : 2u * pi + 1u;
                    vec2 x = vec2(hv[hb + a], hv[hb + b]);
                    vec2 r = rope_pair(x, p, pi, pc.n_rot, pc.freq_base, pc.freq_scale);
                    y = j == a ? r.x : r.y;
                }
                t.v[base + j] = y;
            }
            float y1 = subgroupShuffleXor(y, 1u);
            if (!is_q && j < hd && (j & 1u) == 0u) {
                pc.kc.v[dst + j / 2u] = packHalf2x16(vec2(y, y1));
            }
        }
        subgroupBarrier(); // hv is this item slot's until every lane is done with it
    }
}
