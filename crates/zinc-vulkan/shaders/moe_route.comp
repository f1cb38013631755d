#version 450
// moe_route.comp — mixture-of-experts routing: softmax over the router logits, top k.
//
// Buffers (device addresses in the push constants):
//   logits : Floats — ntok × n_expert router logits, row-major f32
//   ids    : Words  — ntok × k chosen expert ids (u32), best first
//   wts    : Floats — ntok × k weights of the chosen experts
// Push constants (std430, in order): Floats logits; Words ids; Floats wts; uint n_expert; uint k;
//   uint renorm; uint ntok.
// Specialization constant 0: WG, the workgroup size (default 64).
// Dispatch: 1-D, one invocation per token: (min(G, 65535), 1, ceil(G / 65535)) workgroups with
//   G = ceil(ntok / WG); t = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z · numWorkGroups.x · WG.
// As the CPU backend: p_e = exp(l_e − max) / Σ exp(l − max); the k experts of largest p in
// descending order (ties → lower expert id); wts = their p, divided by max(Σ p, 6.1035156e-5)
// when renorm != 0. Pick j is the best expert ordered strictly after pick j−1 under
// (p descending, id ascending), so no per-token array is needed.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats logits;
    Words ids;
    Floats wts;
    uint n_expert;
    uint k;
    uint renorm;
    uint ntok;
} pc;

const uint NONE = 0xFFFFFFFFu;

void main() {
    uint t = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    if (t >= pc.ntok) {
        return;
    }
    uint base = t * pc.n_expert;
    float mx = uintBitsToFloat(0xFF800000u); // −inf
    for (uint e = 0u; e < pc.n_expert; e++) {
        mx = max(mx, pc.logits.v[base + e]);
    }
    float sum = 0.0;
    for (uint e = 0u; e < pc.n_expert; e++) {
        sum += exp(pc.logits.v[base + e] - mx);
    }

    uint kk = min(pc.k, pc.n_expert);
    float prev_p = 0.0;
    uint prev_e = NONE;
    float wsum = 0.0;
    for (uint j = 0u; j < kk; j++) {
        float best_p = 0.0;
        uint best_e = NONE;
        for (uint e = 0u; e < pc.n_expert; e++) {
            float p = exp(pc.logits.v[base + e] - mx) / sum;
            bool after_prev = prev_e == NONE || p < prev_p || (p == prev_p && e > prev_e);
            if (after_prev && (best_e == NONE || p > best_p)) {
                best_p = p;
                best_e = e;
            }
        }
        if (best_e == NONE) {
            best_e = 0u; // only with NaN logits
            best_p = 0.0;
        }
        pc.ids.v[t * pc.k + j] = best_e;
        pc.wts.v[t * pc.k + j] = best_p;
        wsum += best_p;
        prev_p = best_p;
        prev_e = best_e;
    }
    if (pc.renorm != 0u) {
        float s = max(wsum, 6.1035156e-5);
        for (uint j = 0u; j < kk; j++) {
            pc.wts.v[t * pc.k + j] = pc.wts.v[t * pc.k + j] / s;
        }
    }
}
