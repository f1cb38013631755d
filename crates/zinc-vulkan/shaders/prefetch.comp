#version 450
#extension GL_EXT_buffer_reference_uvec2 : require
// prefetch.comp — the L2 prefetcher (`VulkanOptions::prefetch`): one dispatch a decode step on
// a second queue of the device, running beside the step's own commands. Between a step's big
// mat-vecs lie stages that leave memory idle (norms, the attention, the barriers' waits); the
// prefetcher reads the next mat-vec's weight bytes then, so that the mat-vec finds them in the
// L2 cache. It reads and keeps nothing: its loads are folded into a word stored only if it
// equals a value it practically never takes (so the loads stay).
//
// Where the step is: the main queue writes its progress word after every barrier (the host
// records an update of it), (epoch & 0xFFFF) << 16 | stage, the stage the barriers so far
// count since the step began; 0xFFFF as the stage when the step is over. The plan, from the
// previous step's mat-vecs (the same kernels every step), lists for each mat-vec stage the
// weights to read, the stage after which to start (the one after the mat-vec before it) and
// the stage by which reading is pointless (its own: it has begun).
//
// Buffers (device addresses in the push constants):
//   plan     : Words — `n` entries of 8 words: address (low, high), row bytes, rows, 16-byte
//              units read from each row's start, trigger stage, until stage, 0
//   progress : Words — word 0, the main queue's progress (read only, through atomics)
//   sink     : Words — one word, written only in the unlikely case above
// Push constants (std430, in order): plan, progress, sink; uint n, epoch, delay (dependent
//   multiply-adds between two polls), max_polls (then it gives up: never hangs the device).
// Specialization constants: 0 = WG, the workgroup size; 1 = U, 16-byte loads an invocation has
//   in flight before it folds them.
// Dispatch: any number of workgroups (x only); each reads a strided share of every entry.

#include "common.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint U = 4;
layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform PC {
    Words plan;
    Words progress;
    Words sink;
    uint n;
    uint epoch;
    uint delay;
    uint max_polls;
} pc;

// What the poll found: GO (read the entry), WAIT, SKIP (the mat-vec has begun), STOP (the step
// is over, a later one has begun, or the polls ran out).
const uint GO = 0u;
const uint WAIT = 1u;
const uint SKIP = 2u;
const uint STOP = 3u;

shared uint verdict;

uint judge(uint w, uint trigger, uint until) {
    uint e = w >> 16;
    uint s = w & 0xFFFFu;
    uint mine = pc.epoch & 0xFFFFu;
    if (e != mine) {
        // A later step (within half the epochs' circle) means this one is over.
        uint ahead = (e - mine) & 0xFFFFu;
        return ahead < 0x8000u ? STOP : WAIT;
    }
    if (s == 0xFFFFu) {
        return STOP;
    }
    if (s >= until) {
        return SKIP;
    }
    return s >= trigger ? GO : WAIT;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint threads = gl_NumWorkGroups.x * WG;
    uint me = gl_WorkGroupID.x * WG + tid;
    uint acc = 0u;
    uint polls = 0u;
    for (uint i = 0u; i < pc.n; i++) {
        uint b = 8u * i;
        uvec2 addr = uvec2(pc.plan.v[b], pc.plan.v[b + 1u]);
        uint row16 = pc.plan.v[b + 2u] >> 4;
        uint rows = pc.plan.v[b + 3u];
        uint per_row = pc.plan.v[b + 4u];
        uint trigger = pc.plan.v[b + 5u];
        uint until = pc.plan.v[b + 6u];
        // Wait for the trigger (the first invocation polls; the others wait at the barrier).
        if (tid == 0u) {
            uint v = WAIT;
            while (v == WAIT) {
                v = judge(atomicOr(pc.progress.v[0], 0u), trigger, until);
                polls++;
                if (polls >= pc.max_polls) {
                    v = STOP;
                }
                if (v == WAIT) {
                    uint x = polls;
                    for (uint k = 0u; k < pc.delay; k++) {
                        x = x * 1664525u + 1013904223u;
                    }
                    acc ^= x;
                }
            }
            verdict = v;
        }
        barrier();
        uint v = verdict;
        barrier();
        if (v == STOP) {
            break;
        }
        if (v == SKIP) {
            continue;
        }
        Quads w = Quads(addr);
        uint total = rows * per_row;
        for (uint base = 0u; base < total; base += threads * U) {
            uvec4 got[U];
            [[unroll]] for (uint k = 0u; k < U; k++) {
                uint u = base + k * threads + me;
                uint r = u / max(per_row, 1u);
                uint c = u - r * per_row;
                got[k] = u < total ? w.v[r * row16 + c] : uvec4(0u);
            }
            [[unroll]] for (uint k = 0u; k < U; k++) {
                acc ^= got[k].x ^ got[k].y ^ got[k].z ^ got[k].w;
            }
            // Stop reading once the mat-vec has begun (or the step is over).
            if (tid == 0u) {
                verdict = judge(atomicOr(pc.progress.v[0], 0u), trigger, until);
            }
            barrier();
            uint now = verdict;
            barrier();
            if (now != GO) {
                break;
            }
        }
    }
    if (acc == 0x9E3779B9u && me == 0xFFFFFFFFu) {
        pc.sink.v[0] = acc;
    }
}
