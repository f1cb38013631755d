// clock.glsl — the `_clk` variants' entry point (`VulkanOptions::clock`, `zinc bench
// --vk-clock`): each workgroup's start and end on the device's clock.
//
// build.rs appends this file to a copy of a shader whose `void main()` it renamed
// `zinc_main()`, with the two clock extensions (GL_EXT_shader_realtime_clock: the device's
// clock, in nanoseconds, the same for every SM; GL_ARB_shader_clock: a subgroup's cycle
// counter, which the start and the end may read in different subgroups of the workgroup —
// one counter on NVIDIA, an SM's) after `#version`. The kernel's work is untouched: every invocation runs zinc_main
// (its early returns come back here), and around it the workgroup's first invocation reads
// both clocks as it starts, the last invocation to finish reads them again and writes a record.
//
// Specialization constants (Context::pipeline sets them on `_clk` pipelines only):
//   20, 21 — the record buffer's device address (low, high word);
//   22 — the pipeline's kind (Context::clock_kind: which pipeline wrote the record);
//   23 — the records the buffer holds.
// The buffer: word 0 counts the workgroups that ran (each takes the next record), words 1–3
// unused; record i at word 4 + 16i: kind, SM cycles from start to end (low 32 bits), start
// (device clock, low word then high), end (likewise), two unused words, then the SM cycles from
// start to each of the kernel's marks 0–7 (CLK_MARK in common.glsl; 0: not reached). A
// workgroup past the buffer's end is counted but writes nothing.
//
// What it costs the kernel: a barrier before its work, a device atomic issued at the start
// (its result used only at the end), a few shared words, and one record's stores after the
// work — the timing of the step is not the uninstrumented one; the records say where its
// time goes, stage by stage.

layout(constant_id = 20) const uint CLK_LO = 0u;
layout(constant_id = 21) const uint CLK_HI = 0u;
layout(constant_id = 22) const uint CLK_KIND = 0u;
layout(constant_id = 23) const uint CLK_CAP = 0u;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer ClockWords { uint v[]; };

shared uint clk_done;   // invocations that finished zinc_main
shared uint clk_slot;   // the workgroup's record
shared uvec2 clk_t0;    // the device clock at the start
shared uint clk_c0;     // the SM clock at the start

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint size = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    ClockWords cw = ClockWords(uvec2(CLK_LO, CLK_HI));
    uint slot = 0u;
    if (tid == 0u) {
        clk_done = 0u;
        clk_t0 = clockRealtime2x32EXT();
        clk_c0 = clock2x32ARB().x;
        for (uint i = 0u; i < CLK_MARKS; i++) {
            clk_m[i] = 0u;
        }
        slot = atomicAdd(cw.v[0], 1u);
    }
    barrier();
    zinc_main();
    if (tid == 0u) {
        clk_slot = slot;
    }
    memoryBarrierShared();
    uint done = atomicAdd(clk_done, 1u);
    if (done + 1u == size) { // the last invocation of the workgroup to finish
        memoryBarrierShared();
        uvec2 t1 = clockRealtime2x32EXT();
        uint c1 = clock2x32ARB().x;
        uint s = clk_slot;
        if (s < CLK_CAP) {
            uint at = 4u + 16u * s;
            cw.v[at] = CLK_KIND;
            cw.v[at + 1u] = c1 - clk_c0;
            cw.v[at + 2u] = clk_t0.x;
            cw.v[at + 3u] = clk_t0.y;
            cw.v[at + 4u] = t1.x;
            cw.v[at + 5u] = t1.y;
            for (uint i = 0u; i < CLK_MARKS; i++) {
                uint m = clk_m[i];
                cw.v[at + 8u + i] = m == 0u ? 0u : max(m - clk_c0, 1u);
            }
        }
    }
}
