#version 450
// kv_store.comp — writes K and V rows into the f16 KV cache at their positions.
//
// Buffers (device addresses in the push constants):
//   k, v   : Floats — nrows × kv_dim values each, row-major f32
//   kc, vc : Words  — the layer's K and V caches: f16 pairs, value j of position p at half
//                     index p·kv_dim + j, i.e. word (p·kv_dim + j)/2, low half = even j
//                     (kv_dim even)
//   pos    : Words  — nrows positions (u32)
// Push constants (std430, in order): Floats k; Floats v; Words kc; Words vc; Words pos;
//   uint kv_dim; uint nrows.
// Specialization constant 0: WG, the workgroup size (default 256).
// Dispatch: 1-D over nrows · kv_dim/2 invocations (one per word), z-folded:
//   (min(G, 65535), 1, ceil(G / 65535)) workgroups, G = ceil(nrows·kv_dim/2 / WG);
//   id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z · numWorkGroups.x · WG.
// t = id / (kv_dim/2), j2 = id % (kv_dim/2):
//   kc[pos[t]·kv_dim/2 + j2] = packHalf2x16(k[t·kv_dim + 2j2], k[t·kv_dim + 2j2 + 1]), and
//   the same from v into vc.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats k;
    Floats v;
    Words kc;
    Words vc;
    Words pos;
    uint kv_dim;
    uint nrows;
} pc;

void main() {
    uint id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    uint half_dim = pc.kv_dim / 2u;
    if (half_dim == 0u || id >= pc.nrows * half_dim) {
        return;
    }
    uint t = id / half_dim;
    uint j2 = id % half_dim;
    uint src = t * pc.kv_dim + 2u * j2;
    uint dst = pc.pos.v[t] * half_dim + j2;
    pc.kc.v[dst] = packHalf2x16(vec2(pc.k.v[src], pc.k.v[src + 1u]));
    pc.vc.v[dst] = packHalf2x16(vec2(pc.v.v[src], pc.v.v[src + 1u]));
}
