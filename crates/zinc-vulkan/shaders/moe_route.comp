#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// moe_route.comp — mixture-of-experts routing: softmax over the router logits, top k.
//
// Buffers (device addresses in the push constants):
//   logits : Floats — ntok × n_expert router logits, row-major f32
//   ids    : Words  — ntok × k chosen expert ids (u32), best first
//   wts    : Floats — ntok × k weights of the chosen experts
// Push constants (std430, in order): Floats logits; Words ids; Floats wts; uint n_expert; uint k;
//   uint renorm; uint ntok.
// Workgroup: WG = 64 invocations per token (invocation i looks at experts i, i + WG, …).
// Specialization constants: 1 = RANK (default 1), 0 keeping the rounds below for every size;
// 0 = SG, 1 where subgroup shuffles may reduce (butterflies within each
//   subgroup, then the subgroups' results through shared memory: two barriers a reduction
//   instead of a tree's seven). It assumes whole subgroups of at most 64 invocations (the
//   workgroup), as every device seen has.
// Dispatch: (min(ntok, 65535), 1, ceil(ntok / 65535)): token t = x + z · 65535.
// As the CPU backend: p_e = exp(l_e − max) / Σ exp(l − max); the k experts of largest p in
// descending order (ties → lower expert id); wts = their p, divided by max(Σ p, 6.1035156e-5)
// when renorm != 0 (their sum taken in pick order). Up to 1,024 experts and 64 picks, every p
// goes to shared memory and each expert's rank is counted against all the others in one pass
// (a NaN p ranks last and weighs 0). Beyond that, pick j is the best expert ordered strictly
// after pick j−1 under (p descending, id ascending), a round a pick: each invocation finds its
// best, then the workgroup's, so no per-token array is needed and any n_expert works.

#include "common.glsl"

const uint WG = 64u;
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint SG = 0;
layout(constant_id = 1) const uint RANK = 1; // 0: the rounds whatever the sizes (checks)
layout(constant_id = 2) const uint RT_GENERAL = 0; // route.glsl's (tests)
const uint RT_ON = RANK;
const uint RT_WG = WG;

layout(push_constant, std430) uniform PC {
    Floats logits;
    Words ids;
    Floats wts;
    uint n_expert;
    uint k;
    uint renorm;
    uint ntok;
} pc;

#define RT_LOGIT(i) pc.logits.v[i]
#include "route.glsl"

const uint NONE = 0xFFFFFFFFu;

shared float rp[WG];
shared uint re[WG];

// (p, e) ranks before (bp, be): larger p, then lower id; NONE ranks last.
bool better(float p, uint e, float bp, uint be) {
    return e != NONE && (be == NONE || p > bp || (p == bp && e < be));
}

// The workgroup's largest v (op 0) or sum of v (op 1); every invocation gets it.
float reduce(float v, uint op, uint tid) {
    if (SG == 1u) {
        for (uint st = gl_SubgroupSize / 2u; st > 0u; st >>= 1) {
            float o = subgroupShuffleXor(v, st);
            v = op == 0u ? max(v, o) : v + o;
        }
        if (gl_SubgroupInvocationID == 0u) {
            rp[gl_SubgroupID] = v;
        }
        barrier();
        v = rp[0];
        for (uint i = 1u; i < gl_NumSubgroups; i++) {
            v = op == 0u ? max(v, rp[i]) : v + rp[i];
        }
        barrier();
        return v;
    }
    rp[tid] = v;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            rp[tid] = op == 0u ? max(rp[tid], rp[tid + s]) : rp[tid] + rp[tid + s];
        }
        barrier();
    }
    v = rp[0];
    barrier();
    return v;
}

// The workgroup's best (p, e) under `better`; every invocation gets it.
void reduce_best(inout float p, inout uint e, uint tid) {
    if (SG == 1u) {
        for (uint st = gl_SubgroupSize / 2u; st > 0u; st >>= 1) {
            float p2 = subgroupShuffleXor(p, st);
            uint e2 = subgroupShuffleXor(e, st);
            if (better(p2, e2, p, e)) {
                p = p2;
                e = e2;
            }
        }
        if (gl_SubgroupInvocationID == 0u) {
            rp[gl_SubgroupID] = p;
            re[gl_SubgroupID] = e;
        }
        barrier();
        p = rp[0];
        e = re[0];
        for (uint i = 1u; i < gl_NumSubgroups; i++) {
            if (better(rp[i], re[i], p, e)) {
                p = rp[i];
                e = re[i];
            }
        }
        barrier();
        return;
    }
    rp[tid] = p;
    re[tid] = e;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (tid < s && better(rp[tid + s], re[tid + s], rp[tid], re[tid])) {
            rp[tid] = rp[tid + s];
            re[tid] = re[tid + s];
        }
        barrier();
    }
    p = rp[0];
    e = re[0];
    barrier();
}

void main() {
    uint t = gl_WorkGroupID.x + gl_WorkGroupID.z * 65535u;
    if (t >= pc.ntok) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint base = t * pc.n_expert;

    uint kk = min(pc.k, pc.n_expert);
    if (RANK == 1u && SG == 1u && pc.n_expert <= RT_MAXE && kk <= RT_MAXK) {
        // Every expert's p once into shared memory, each expert's rank counted against all
        // the others (route.glsl): the same picks in the same order as the rounds below.
        route_token(base, pc.n_expert, kk, pc.renorm);
        if (tid < kk) { // pick j by invocation j (kk ≤ RT_MAXK = WG)
            pc.ids.v[t * pc.k + tid] = rt_sel_e[tid];
            pc.wts.v[t * pc.k + tid] = rt_sel_p[tid];
        }
        return;
    }
    // More experts or picks than route.glsl holds, or no subgroup shuffles: k rounds, each the
    // best expert after the previous pick.
    float mx = uintBitsToFloat(0xFF800000u); // −inf
    for (uint e = tid; e < pc.n_expert; e += WG) {
        mx = max(mx, pc.logits.v[base + e]);
    }
    mx = reduce(mx, 0u, tid);
    float part = 0.0;
    for (uint e = tid; e < pc.n_expert; e += WG) {
        part += exp(pc.logits.v[base + e] - mx);
    }
    float sum = reduce(part, 1u, tid);

    float prev_p = 0.0;
    uint prev_e = NONE;
    float wsum = 0.0;
    for (uint j = 0u; j < kk; j++) {
        float best_p = 0.0;
        uint best_e = NONE;
        for (uint e = tid; e < pc.n_expert; e += WG) {
            float p = exp(pc.logits.v[base + e] - mx) / sum;
            bool after_prev = prev_e == NONE || p < prev_p || (p == prev_p && e > prev_e);
            if (after_prev && better(p, e, best_p, best_e)) {
                best_p = p;
                best_e = e;
            }
        }
        reduce_best(best_p, best_e, tid);
        if (best_e == NONE) {
            best_e = 0u; // only with NaN logits
            best_p = 0.0;
        }
        if (tid == 0u) {
            pc.ids.v[t * pc.k + j] = best_e;
            pc.wts.v[t * pc.k + j] = best_p;
        }
        wsum += best_p;
        prev_p = best_p;
        prev_e = best_e;
    }
    if (pc.renorm != 0u && tid == 0u) {
        float s = max(wsum, 6.1035156e-5);
        for (uint j = 0u; j < kk; j++) {
            pc.wts.v[t * pc.k + j] = pc.wts.v[t * pc.k + j] / s;
        }
    }
}
