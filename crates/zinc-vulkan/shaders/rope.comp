#version 450
#extension GL_EXT_buffer_reference_uvec2 : require
// rope.comp — rotary position embedding in place, on one tensor or two (queries and keys).
//
// Buffers (device addresses in the push constants):
//   x   : Floats — nrows × ncols activations, row-major f32; each row holds ncols / head_dim
//                  heads of head_dim values; rotated in place
//   y   : Floats — a second such tensor of nrows × ycols (0: none), rotated the same way
//   pos : Words  — nrows positions (u32), one per row (shared by x and y)
//   cs  : Floats — 0, or for one row the cos and sin of each pair i < n_rot/2 at its position as
//                  the host computed them (the CPU backend's values; qk_prep.comp and
//                  attn_dec_prep take the same table), used in place of the angles below
// Push constants (std430, in order): Floats x; Floats y; Words pos; Floats cs; uint ncols; uint ycols;
//   uint head_dim; uint n_rot; uint neox; float freq_base; float freq_scale; uint nrows;
//   uint nx (the invocations that work on x; the rest work on y).
// Specialization constant 0: WG, the workgroup size (default 64).
// Dispatch: 1-D over N = nrows · ((ncols + ycols) / head_dim) · (n_rot / 2) invocations, z-folded:
//   (min(G, 65535), 1, ceil(G / 65535)) workgroups with G = ceil(N / WG);
//   gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z · numWorkGroups.x · WG (gid ≥ N exits).
// Invocation gid = (row, head, pair i < n_rot/2), i fastest:
//   theta = pos[row] · freq_scale · freq_base^(−2i/n_rot), the power stepped in f32 as the CPU
//   backend (and ggml) does: theta_scale = freq_base^(−2/n_rot), multiplied i times;
//   neox = 0 ("Norm") rotates (x[2i], x[2i+1]); neox = 1 rotates (x[i], x[i + n_rot/2]):
//   (x0, x1) → (x0·cos − x1·sin, x0·sin + x1·cos). Dimensions ≥ n_rot are untouched.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats y;
    Words pos;
    Floats cs;
    uint ncols;
    uint ycols;
    uint head_dim;
    uint n_rot;
    uint neox;
    float freq_base;
    float freq_scale;
    uint nrows;
    uint nx;
} pc;

#include "rope.glsl"

void main() {
    uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.z * gl_NumWorkGroups.x * WG;
    uint half_rot = pc.n_rot / 2u;
    bool on_y = gid >= pc.nx;
    uint cols = on_y ? pc.ycols : pc.ncols;
    if (on_y) {
        gid -= pc.nx;
    }
    uint nheads = cols / pc.head_dim;
    if (half_rot == 0u || gid >= pc.nrows * nheads * half_rot) {
        return;
    }
    Floats v = on_y ? pc.y : pc.x;
    uint i = gid % half_rot;
    uint head = (gid / half_rot) % nheads;
    uint row = gid / (half_rot * nheads);

    uint base = row * cols + head * pc.head_dim;
    uint a = (pc.neox != 0u) ? base + i : base + 2u * i;
    uint b = (pc.neox != 0u) ? base + i + half_rot : base + 2u * i + 1u;
    vec2 x = vec2(v.v[a], v.v[b]);
    vec2 y = uvec2(pc.cs) != uvec2(0u) // uniform
        ? rope_rotate(x, vec2(pc.cs.v[2u * i], pc.cs.v[2u * i + 1u]))
        : rope_pair(x, pc.pos.v[row], i, pc.n_rot, pc.freq_base, pc.freq_scale);
    v.v[a] = y.x;
    v.v[b] = y.y;
}
