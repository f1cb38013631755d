#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_buffer_reference_uvec2 : require
// norm_quant.comp — RMSNorm of whole rows (rms_norm.comp's arithmetic, rms.glsl) that also
// quantizes its output for the integer-dot mat-vec that reads it next (quant8.glsl): one
// dispatch where rms_norm + quant_act take two.
//
// Buffers (device addresses in the push constants):
//   x : Floats — nrows × ncols activations, row-major f32
//   w : Floats — the ncols weights
//   o : Floats — the normalized rows, same layout (never x)
//   q, s       — o quantized (quant8.glsl's layout, over the flattened rows)
// Push constants (std430, in order): Floats x; Floats w; Floats o; Words q; Floats s;
//   uint ncols; float eps; uint nrows; uint mode (1 Q8_0/Q8_1: ncols a multiple of 32; 2 Q8_K:
//   of 256); Words sync, uint epoch: where sync is not 0, a slot of sync.glsl that the last
//   workgroup to finish signals with epoch (early-weights consumers recorded beside it).
// Specialization constants: 0 = WG, the workgroup size (a multiple of 64: rms_norm.comp's for
//   rows this wide, so the sums agree to the bit; the host takes this kernel for decode steps
//   only); 1 = SG as there.
// Dispatch: nrows · ceil(ncols / (4·WG)) workgroups, z-folded (wg_linear()): workgroup (row, c)
//   sums the whole row's squares (as rms_norm.comp does) and writes and quantizes its values
//   4·WG·c .. 4·WG·(c + 1) − 1, 4 an invocation, so aligned groups of 8 (64) invocations hold
//   whole 32-value (256-value) blocks. Several workgroups share a row: a decode step's norm is
//   spread over the GPU instead of one workgroup.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint SG = 1;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Floats x;
    Floats w;
    Floats o;
    Words q;
    Floats s;
    uint ncols;
    float eps;
    uint nrows;
    uint mode;
    Words sync;
    uint epoch;
} pc;

#include "rms.glsl"
#include "quant8.glsl"
#include "sync.glsl"

void main() {
    uint chunks = (pc.ncols + 4u * WG - 1u) / (4u * WG);
    uint row = wg_linear() / chunks;
    uint chunk = wg_linear() % chunks;
    if (row >= pc.nrows) {
        return; // uniform over the workgroup
    }
    uint tid = gl_LocalInvocationID.x;
    uint base = row * pc.ncols;
    uint j = 4u * WG * chunk + 4u * tid;
    bool live = j < pc.ncols; // ncols is a multiple of 32: a word is wholly in or out
    // This invocation's values and weights are loaded before the row's sum (which holds
    // barriers the loads would otherwise wait behind): the weights come from memory, not L2.
    vec4 xv = vec4(0.0), wv = vec4(0.0);
    if (live) {
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            xv[k] = pc.x.v[base + j + k];
            wv[k] = pc.w.v[j + k];
        }
    }
    float scale = rms_scale(pc.x, base, pc.ncols, pc.eps);
    CLK_MARK(0); // the row's sum
    vec4 v = vec4(0.0);
    if (live) {
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            v[k] = (xv[k] * scale) * wv[k];
            pc.o.v[base + j + k] = v[k];
        }
    }
    quant_word(tid, v, base + j, live, pc.mode, pc.q, pc.s);
    CLK_MARK(1); // quantized
    if (uvec2(pc.sync) != uvec2(0u)) { // uniform
        sync_signal(pc.sync, pc.epoch, pc.nrows * chunks, tid); // the workgroups that got here
    }
}
