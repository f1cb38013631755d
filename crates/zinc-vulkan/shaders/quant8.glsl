// quant8.glsl — 8-bit activation quantization for the integer-dot mat-vec, exactly as the CPU
// backend and llama.cpp quantize before a quantized dot product (crates/zinc-backend/src/cpu/
// dot.rs, quantize_act): the same q values, the same scales. Shared by quant_act.comp and the
// kernels that quantize what they produce (norm_quant.comp, glu_quant.comp).
//
// Output layout:
//   q : Words  — signed bytes, four to a word (element i is byte i % 4 of word i / 4)
//   s : Floats — per 32-element chunk c, four floats at 4c:
//                [d, Σq of its first 16, Σq of its last 16, f16(d·Σq)]
//                (d the chunk's scale: its own for Q8_0/Q8_1, its 256-block's for Q8_K)
// Modes:
//   1 Q8_0 / Q8_1: blocks of 32; d = amax/127 rounded to f16, q = roundEven(x·127/amax)
//   2 Q8_K: blocks of 256; m = the value of largest |x| (the first one), iscale = −127/m,
//           q = min(roundEven(iscale·x), 127), d = 1/iscale (all zero when m = 0)
//
// The includer declares WG (its workgroup size, a multiple of 64) first, and may define Q8_WG,
// the shared arrays' length (default WG; a specialization-constant expression of 1 where the
// includer's variant never quantizes, so it carries no shared memory for it). It enables
// GL_KHR_shader_subgroup_basic and _shuffle: with subgroups of 8 invocations or more (the
// invocations of a subgroup consecutive, as every device seen lays out a 1-D workgroup), the
// block's largest magnitude and the chunk sums go through shuffles, and only a block wider than
// a subgroup meets in shared memory (two barriers where the tree took nine).

#ifndef Q8_WG
#define Q8_WG WG
#endif
shared float q_abs[Q8_WG];
shared uint q_idx[Q8_WG];
shared float q_val[Q8_WG];
shared int q_sum[Q8_WG];

float round_f16(float v) {
    return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
}

void quant_word_tree(uint tid, vec4 v, uint e0, bool live, uint mode, Words q, Floats s);

// Keeps the larger magnitude of (best, at, val) and (ob, oa, ov) — |value|, its element, the
// value — the earlier element on ties.
void q8_better(inout float best, inout uint at, inout float val, float ob, uint oa, float ov) {
    if (ob > best || (ob == best && oa < at)) {
        best = ob;
        at = oa;
        val = ov;
    }
}

// The word's largest magnitude, its element and its value (the first on ties).
void q8_word_best(vec4 v, uint e0, out float best, out uint at, out float val) {
    best = abs(v.x);
    val = v.x;
    at = e0;
    for (uint k = 1u; k < 4u; k++) {
        q8_better(best, at, val, abs(v[k]), e0 + k, v[k]);
    }
}

// The word's quants and its block's scale d, from the block's largest magnitude amax and the
// value m that has it; the word stored where `live`.
ivec4 q8_quants(vec4 v, float amax, float m, uint mode, uint e0, bool live, Words q,
                out float d) {
    ivec4 qi = ivec4(0);
    d = 0.0;
    if (mode == 1u) {
        float id = amax != 0.0 ? 127.0 / amax : 0.0;
        d = round_f16(amax / 127.0);
        qi = ivec4(roundEven(v * id));
    } else if (amax != 0.0) {
        float iscale = -127.0 / m;
        d = 1.0 / iscale;
        qi = ivec4(min(roundEven(iscale * v), vec4(127.0)));
    }
    if (live) {
        q.v[e0 / 4u] = uint(qi.x & 255) | (uint(qi.y & 255) << 8) | (uint(qi.z & 255) << 16)
            | (uint(qi.w & 255) << 24);
    }
    return qi;
}

// The chunk floats of the 32 elements from e0 (its two 16-element sums s0, s1).
void q8_chunk(uint e0, float d, int s0, int s1, Floats s) {
    uint c = e0 / 32u;
    s.v[4u * c] = d;
    s.v[4u * c + 1u] = float(s0);
    s.v[4u * c + 2u] = float(s1);
    s.v[4u * c + 3u] = round_f16(d * float(s0 + s1));
}

// Quantizes v, elements e0 .. e0 + 3 of the flattened activations. Every invocation of the
// workgroup calls it (it holds barriers); invocation tid holds word tid of its group: aligned
// groups of 8 invocations are a 32-block (mode 1), of 64 a 256-block (mode 2). `live`: the word
// exists (whole blocks are live or not).
void quant_word(uint tid, vec4 v, uint e0, bool live, uint mode, Words q, Floats s) {
    uint sgs = gl_SubgroupSize;
    if (sgs < 8u) {
        quant_word_tree(tid, v, e0, live, mode, q, s); // uniform: the subgroup size
        return;
    }
    float best, val;
    uint at;
    q8_word_best(v, e0, best, at, val);
    // Over 8 words (a 32-block) or 64 (a 256-block): within the subgroup, then (a block wider
    // than it) the subgroups' results in shared memory, in subgroup order.
    uint span = mode == 1u ? 8u : 64u;
    for (uint st = 1u; st < min(span, sgs); st *= 2u) {
        float ob = subgroupShuffleXor(best, st);
        uint oa = subgroupShuffleXor(at, st);
        float ov = subgroupShuffleXor(val, st);
        q8_better(best, at, val, ob, oa, ov);
    }
    if (span > sgs) {
        barrier(); // an earlier call's reads of shared memory are done
        if (gl_SubgroupInvocationID == 0u) {
            uint g = tid / sgs;
            q_abs[g] = best;
            q_idx[g] = at;
            q_val[g] = val;
        }
        barrier();
        uint g0 = (tid / span) * (span / sgs);
        best = q_abs[g0];
        at = q_idx[g0];
        val = q_val[g0];
        for (uint g = 1u; g < span / sgs; g++) {
            q8_better(best, at, val, q_abs[g0 + g], q_idx[g0 + g], q_val[g0 + g]);
        }
    }
    float d;
    ivec4 qi = q8_quants(v, best, val, mode, e0, live, q, d);
    // Sums over 16 elements (4 words), then one writer per 32-element chunk.
    int sq = qi.x + qi.y + qi.z + qi.w;
    sq += subgroupShuffleXor(sq, 1u);
    sq += subgroupShuffleXor(sq, 2u);
    int other = subgroupShuffleXor(sq, 4u);
    if (live && tid % 8u == 0u) {
        q8_chunk(e0, d, sq, other, s);
    }
}

// quant_word by a shared-memory tree (subgroups of fewer than 8 invocations).
void quant_word_tree(uint tid, vec4 v, uint e0, bool live, uint mode, Words q, Floats s) {
    barrier(); // an earlier call's reads of shared memory are done
    float best, val;
    uint at;
    q8_word_best(v, e0, best, at, val);
    q_abs[tid] = best;
    q_idx[tid] = at;
    q_val[tid] = val;
    // Reduce over 8 words (a 32-block) or 64 (a 256-block); groups are aligned.
    uint span = mode == 1u ? 8u : 64u;
    for (uint st = span / 2u; st > 0u; st >>= 1) {
        barrier();
        if ((tid % span) < st) {
            float a = q_abs[tid], v2 = q_val[tid];
            uint j = q_idx[tid];
            q8_better(a, j, v2, q_abs[tid + st], q_idx[tid + st], q_val[tid + st]);
            q_abs[tid] = a;
            q_idx[tid] = j;
            q_val[tid] = v2;
        }
    }
    barrier();
    uint lead = tid - tid % span;
    float d;
    ivec4 qi = q8_quants(v, q_abs[lead], q_val[lead], mode, e0, live, q, d);
    // Sums over 16 elements (4 words), then one writer per 32-element chunk.
    q_sum[tid] = qi.x + qi.y + qi.z + qi.w;
    barrier();
    if (live && tid % 8u == 0u) {
        int s0 = q_sum[tid] + q_sum[tid + 1u] + q_sum[tid + 2u] + q_sum[tid + 3u];
        int s1 = q_sum[tid + 4u] + q_sum[tid + 5u] + q_sum[tid + 6u] + q_sum[tid + 7u];
        q8_chunk(e0, d, s0, s1, s);
    }
}
