#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// qk_prep.comp — attention's inputs for one layer in one dispatch: RMSNorm of each query and key
// head (where the model has q/k norms; rms.glsl, as rms_norm.comp computes it), RoPE on both
// (rope.glsl, as rope.comp), and the keys and values stored in the f16 KV cache at their
// positions (as kv_store.comp). The queries and keys are also written back in place.
//
// Buffers (device addresses in the push constants):
//   q      : Floats — nrows × nq·head_dim queries, row-major f32 (in place)
//   k, v   : Floats — nrows × nk·head_dim keys (in place) and values
//   qw, kw : Floats — the head_dim norm weights of queries and keys (used per `flags`)
//   kc, vc : Words  — the layer's K and V caches: f16 pairs, value j of position p at half
//                     index p·nk·head_dim + j (kv_store.comp's layout)
//   pos    : Words  — nrows positions (u32)
// Push constants (std430, in order): Floats q; Floats k; Floats v; Floats qw; Floats kw;
//   Words kc; Words vc; Words pos; uint nq; uint nk; uint head_dim (even, ≤ 512);
//   uint n_rot (≤ head_dim); uint neox; float freq_base; float freq_scale; float eps;
//   uint nrows; uint flags (bit 0: norm the queries, bit 1: the keys, bit 2: RoPE's cos and sin
//   from `cs`); Floats cs: with flags bit 2 (one row), the cos and sin of each pair
//   i < n_rot / 2 at the row's position as the host computed them (the CPU backend's values,
//   the same table attn_dec_prep takes), in place of rope.glsl's angles.
// Specialization constants: 0 = WG (rms_norm.comp's workgroup for the same group and rows, so
//   the norms agree to the bit: the decode norm workgroup for decode steps); 1 = SG as in rms_norm.comp.
// Dispatch: nrows · (nq + 2·nk) workgroups, z-folded; workgroup (row, h) with h < nq a query
//   head, then nk key heads, then nk value heads.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint SG = 1;
layout(local_size_x_id = 0) in;

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

#include "rms.glsl"
#include "rope.glsl"

shared float hv[512];

void main() {
    uint per_row = pc.nq + 2u * pc.nk;
    uint idx = wg_linear();
    uint row = idx / per_row;
    uint h = idx % per_row;
    if (row >= pc.nrows) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint hd = pc.head_dim;
    uint kv_dim = pc.nk * hd;
    uint p = pc.pos.v[row];
    if (h >= pc.nq + pc.nk) {
        // A value head: straight into the cache.
        uint src = row * kv_dim + (h - pc.nq - pc.nk) * hd;
        uint dst = (p * kv_dim + (h - pc.nq - pc.nk) * hd) / 2u;
        for (uint j2 = tid; j2 < hd / 2u; j2 += WG) {
            pc.vc.v[dst + j2] = packHalf2x16(vec2(pc.v.v[src + 2u * j2], pc.v.v[src + 2u * j2 + 1u]));
        }
        return;
    }
    bool is_q = h < pc.nq;
    Floats t = is_q ? pc.q : pc.k;
    Floats nw = is_q ? pc.qw : pc.kw;
    uint head = is_q ? h : h - pc.nq;
    uint base = row * (is_q ? pc.nq * hd : kv_dim) + head * hd;
    bool norm = (pc.flags & (is_q ? 1u : 2u)) != 0u;
    // This invocation's values and norm weights (head_dim ≤ 512 and WG ≥ 64: at most eight)
    // are loaded before the head's sum, which holds barriers they would otherwise wait behind.
    float xs[8], ws[8];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint j = tid + i * WG;
        xs[i] = j < hd ? t.v[base + j] : 0.0;
        ws[i] = j < hd && norm ? nw.v[j] : 1.0;
    }
    // With the host's table, the cos and sin of this invocation's pairs, loaded with the rest.
    uint half_rot = pc.n_rot / 2u;
    bool table = (pc.flags & 4u) != 0u;
    vec2 csr[8];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint j = tid + i * WG;
        uint pi = pc.neox != 0u ? j % max(half_rot, 1u) : j / 2u;
        csr[i] = table && j < 2u * half_rot ? vec2(pc.cs.v[2u * pi], pc.cs.v[2u * pi + 1u])
                                            : vec2(1.0, 0.0);
    }
    float scale = 1.0;
    if (norm) {
        scale = rms_scale(t, base, hd, pc.eps); // uniform over the workgroup
    }
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint j = tid + i * WG;
        if (j < hd) {
            hv[j] = norm ? (xs[i] * scale) * ws[i] : xs[i];
        }
    }
    barrier();
    if (SG == 1u && gl_SubgroupSize >= 2u) {
        // Each invocation rotates its own values (both of a pair compute the pair's rotation, the
        // same bits) and stores them; a key's f16 pair meets by a shuffle (values j and j ^ 1 are
        // in invocations tid and tid ^ 1: WG is even). One barrier where a pass of pairs in
        // shared memory took two.
        uint dst = (p * kv_dim + head * hd) / 2u;
        [[unroll]] for (uint i = 0u; i < 8u; i++) { // unrolled: csr[i] stays in registers
            if (i * WG >= hd) {
                break; // uniform
            }
            uint j = tid + i * WG;
            float y = 0.0;
            if (j < hd) {
                y = hv[j];
                if (j < 2u * half_rot) { // an odd n_rot's last dimension stays as it is
                    uint pi = pc.neox != 0u ? j % half_rot : j / 2u;
                    uint a = pc.neox != 0u ? pi : 2u * pi;
                    uint b = pc.neox != 0u ? pi + half_rot : 2u * pi + 1u;
                    vec2 x = vec2(hv[a], hv[b]);
                    vec2 r = table ? rope_rotate(x, csr[i])
                                   : rope_pair(x, p, pi, pc.n_rot, pc.freq_base, pc.freq_scale);
                    y = j == a ? r.x : r.y;
                }
                t.v[base + j] = y;
            }
            float y1 = subgroupShuffleXor(y, 1u);
            if (!is_q && j < hd && (j & 1u) == 0u) {
                pc.kc.v[dst + j / 2u] = packHalf2x16(vec2(y, y1));
            }
        }
        return;
    }
    for (uint i = tid; i < half_rot; i += WG) {
        uint a = pc.neox != 0u ? i : 2u * i;
        uint b = pc.neox != 0u ? i + half_rot : 2u * i + 1u;
        vec2 x = vec2(hv[a], hv[b]);
        vec2 y = table ? rope_rotate(x, vec2(pc.cs.v[2u * i], pc.cs.v[2u * i + 1u]))
                       : rope_pair(x, p, i, pc.n_rot, pc.freq_base, pc.freq_scale);
        hv[a] = y.x;
        hv[b] = y.y;
    }
    barrier();
    for (uint j = tid; j < hd; j += WG) {
        t.v[base + j] = hv[j];
    }
    if (!is_q) {
        uint dst = (p * kv_dim + head * hd) / 2u;
        for (uint j2 = tid; j2 < hd / 2u; j2 += WG) {
            pc.kc.v[dst + j2] = packHalf2x16(vec2(hv[2u * j2], hv[2u * j2 + 1u]));
        }
    }
}
