#version 450
// moe_sort.comp — groups a mixture of experts' slots by expert for moe_matmul_cm.comp.
//
// Buffers (device addresses in the push constants):
//   ids   : Words — nslots expert ids (moe_route.comp), each < n_expert
//   order : Words — nslots slot indices, expert by expert (within an expert in no fixed order:
//                   each slot's products do not depend on the others of its tile)
//   tiles : Words — max_tiles entries (expert, start, len): expert's slots order[start ..
//                   start + len), len ≤ bn; the entries past the last have len 0
// Push constants (std430, in order): Words ids; Words order; Words tiles; uint nslots;
//   uint n_expert (≤ 1024); uint bn; uint max_tiles (≥ ceil(nslots / bn) + n_expert).
// Dispatch: one workgroup of 256 invocations. Counts per expert (shared atomics), offsets and
// the table (invocation 0, in expert order), then each slot placed at its expert's cursor.

#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant, std430) uniform PC {
    Words ids;
    Words order;
    Words tiles;
    uint nslots;
    uint n_expert;
    uint bn;
    uint max_tiles;
} pc;

const uint MAX_EXPERTS = 1024u;
shared uint cnt[MAX_EXPERTS];

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint ne = min(pc.n_expert, MAX_EXPERTS);
    for (uint e = tid; e < ne; e += 256u) {
        cnt[e] = 0u;
    }
    barrier();
    for (uint s = tid; s < pc.nslots; s += 256u) {
        atomicAdd(cnt[min(pc.ids.v[s], ne - 1u)], 1u);
    }
    barrier();
    if (tid == 0u) {
        uint off = 0u;
        uint nt = 0u;
        for (uint e = 0u; e < ne; e++) {
            uint c = cnt[e];
            for (uint st = 0u; st < c && nt < pc.max_tiles; st += pc.bn) {
                pc.tiles.v[3u * nt] = e;
                pc.tiles.v[3u * nt + 1u] = off + st;
                pc.tiles.v[3u * nt + 2u] = min(pc.bn, c - st);
                nt++;
            }
            cnt[e] = off; // now the expert's cursor
            off += c;
        }
        for (; nt < pc.max_tiles; nt++) {
            pc.tiles.v[3u * nt + 2u] = 0u;
        }
    }
    barrier();
    for (uint s = tid; s < pc.nslots; s += 256u) {
        uint at = atomicAdd(cnt[min(pc.ids.v[s], ne - 1u)], 1u);
        pc.order.v[at] = s;
    }
}
