#version 450
// gridsync.comp — timing only (`zinc sync-cost`): `rounds` barriers across every workgroup of
// one dispatch, each workgroup's first invocation arriving on a counter and spinning until the
// last arrival moves the generation on. What such a barrier costs, against a pipeline barrier
// between dispatches, says whether a decode step could run as fewer dispatches that wait for
// each other inside. Vulkan does not promise that a dispatch's workgroups are resident at once:
// a wait that outlasts `spin_limit` polls sets the error word, and every later round returns at
// once, so a dispatch larger than the device holds ends instead of hanging.
//
// Buffers (device addresses in the push constants):
//   cnt : Words — [arrivals, generation, error], zero before the dispatch
// Push constants (std430, in order): Words cnt; uint rounds; uint spin_limit.
// Specialization constant 0: the workgroup size. Dispatch: (groups, 1, 1).

#include "common.glsl"

layout(local_size_x_id = 0) in;

// Polled words: every read goes to memory shared by the device's workgroups.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer VWords {
    uint v[];
};

layout(push_constant, std430) uniform PC {
    Words cnt;
    uint rounds;
    uint spin_limit;
} pc;

shared uint failed;

void main() {
    uint groups = gl_NumWorkGroups.x;
    VWords c = VWords(pc.cnt);
    for (uint r = 0u; r < pc.rounds; r++) {
        if (gl_LocalInvocationID.x == 0u) {
            failed = c.v[2];
            if (failed == 0u) {
                uint gen = c.v[1]; // read before arriving: the last arrival moves it on after
                memoryBarrierBuffer();
                uint arrived = atomicAdd(pc.cnt.v[0], 1u);
                if (arrived == groups - 1u) {
                    atomicExchange(pc.cnt.v[0], 0u); // the next round counts afresh
                    memoryBarrierBuffer();
                    atomicAdd(pc.cnt.v[1], 1u);
                } else {
                    uint n = 0u;
                    bool waiting = true;
                    while (waiting && n < pc.spin_limit) {
                        waiting = c.v[1] == gen;
                        n++;
                    }
                    if (waiting) {
                        atomicOr(pc.cnt.v[2], 1u);
                        failed = 1u;
                    }
                }
                memoryBarrierBuffer();
            }
        }
        barrier();
        if (failed != 0u) {
            return; // uniform: read after the barrier
        }
        barrier(); // `failed` is rewritten next round only after every invocation read it
    }
}
