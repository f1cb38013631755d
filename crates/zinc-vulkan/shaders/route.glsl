// route.glsl — mixture-of-experts routing of one token by a whole workgroup, in the numbers of
// moe_route.comp's one-pass ranking: p_e = exp(l_e − max) / Σ exp(l − max), the max and the sum
// reduced by invocations 0..63 exactly as moe_route.comp's 64 invocations do (strided loads,
// butterflies within each subgroup, then the subgroups in order), every expert's rank counted
// against all the others under (p descending, id ascending; NaN last), the picks' weights
// divided by max(Σ, 6.1035156e-5) in pick order where renorm != 0.
//
// The includer declares RT_ON (1 where it routes; the shared arrays shrink to one element
// otherwise), RT_WG (its workgroup's invocations), RT_GENERAL (1: the general ranking whatever
// the count, to hold the small one to it bit for bit) and RT_LOGIT(i), logit i of the router's
// output (after its push constants), enables GL_KHR_shader_subgroup_basic and _shuffle, has at
// least 64 invocations and subgroups that divide 64, and calls route_token from every
// invocation (it has barriers). The reductions take invocations 0..63 as whole subgroups
// 0..64 / size − 1 (as drivers lay them out; in a 128-invocation workgroup too).
// Up to RT_MAXE experts and RT_MAXK picks (the host checks).

const uint RT_MAXE = 1024u;
const uint RT_MAXK = 64u;
shared float rt_p[1u + RT_ON * (RT_MAXE - 1u)];
shared float rt_sel_p[1u + RT_ON * (RT_MAXK - 1u)]; // pick j's weight
shared uint rt_sel_e[1u + RT_ON * (RT_MAXK - 1u)];  // pick j's expert
shared float rt_red[1u + RT_ON * 63u]; // the subgroups' partial max or sum
// Up to RT_SMALL experts (route_small): the ranking's keys as vectors, p or −inf for a NaN,
// −inf past n.
const uint RT_SMALL = 128u;
shared vec4 rt_key[1u + RT_ON * (RT_SMALL / 4u - 1u)];
// After route_token, invocation j < k's pick weight (pick j's), whichever form ranked.
float rt_w = 0.0;

// The largest (op 0) or the sum (op 1) of invocations 0..63's v; every invocation gets it.
float rt_reduce(float v, uint op) {
    for (uint st = gl_SubgroupSize / 2u; st > 0u; st >>= 1) {
        float o = subgroupShuffleXor(v, st);
        v = op == 0u ? max(v, o) : v + o;
    }
    if (gl_LocalInvocationIndex < 64u && gl_SubgroupInvocationID == 0u) {
        rt_red[gl_SubgroupID] = v;
    }
    barrier();
    v = rt_red[0];
    for (uint i = 1u; i < 64u / gl_SubgroupSize; i++) {
        v = op == 0u ? max(v, rt_red[i]) : v + rt_red[i];
    }
    barrier();
    return v;
}

// Pick j's weight divided by max(Σ, 6.1035156e-5), Σ the k picks' weights in pick order.
float rt_pick_weight(uint j, uint k) {
    float wsum = 0.0;
    for (uint i = 0u; i < k; i++) {
        wsum += rt_sel_p[i];
    }
    return rt_sel_p[j] / max(wsum, 6.1035156e-5);
}

// The picks' weights renormalized (renorm != 0) in place: pick j by invocation j (k ≤ RT_MAXK
// ≤ the invocations), each summing all k the same way (rt_pick_weight).
void rt_renorm(uint k, uint renorm) {
    uint j = gl_LocalInvocationIndex;
    bool mine = renorm != 0u && j < k;
    float pj = 0.0;
    if (mine) {
        pj = rt_pick_weight(j, k);
    }
    barrier();
    if (mine) {
        rt_sel_p[j] = pj;
    }
    barrier();
}

// The softmax's max and sum as invocations 0..63 reduce them, each over its experts tid (logit
// l0, valid v0) and tid + 64 (l1, v1), in that order: (max, sum) to every invocation.
vec2 rt_max_sum(float l0, float l1, bool v0, bool v1) {
    float mx = uintBitsToFloat(0xFF800000u); // −inf
    if (v0) {
        mx = max(mx, l0);
    }
    if (v1) {
        mx = max(mx, l1);
    }
    mx = rt_reduce(mx, 0u);
    float part = 0.0;
    if (v0) {
        part += exp(l0 - mx);
    }
    if (v1) {
        part += exp(l1 - mx);
    }
    return vec2(mx, rt_reduce(part, 1u));
}

// Counts of the keys in rt_key above key q0 of expert e0 (into r0) and, where `two`, above q1
// of e1 (into r1); ties: the lower id first. A key past n is −inf at an id above every
// expert's, so it counts for none. The keys are read as vectors, four (16 keys) in flight,
// each compared against both experts' (`two` is a constant at every call: the second count
// folds away where it is false).
void rt_count(inout uint r0, inout uint r1, float q0, float q1, uint e0, uint e1, uint n,
              bool two) {
    for (uint b = 0u; b < (n + 15u) / 16u; b++) {
        vec4 kv[4];
        [[unroll]] for (uint u = 0u; u < 4u; u++) {
            kv[u] = rt_key[4u * b + u];
        }
        [[unroll]] for (uint u = 0u; u < 4u; u++) {
            [[unroll]] for (uint c = 0u; c < 4u; c++) {
                uint o = 16u * b + 4u * u + c;
                float ko = kv[u][c];
                r0 += (ko > q0 || (ko == q0 && o < e0)) ? 1u : 0u;
                if (two) {
                    r1 += (ko > q1 || (ko == q1 && o < e1)) ? 1u : 0u;
                }
            }
        }
    }
}

// Expert e (valid v, probability p) of rank r is pick r where r < k (weight 0 for a NaN).
void rt_pick(bool v, uint r, float p, uint e, uint k) {
    if (v && r < k) {
        rt_sel_p[r] = isnan(p) ? 0.0 : p;
        rt_sel_e[r] = e;
    }
}

// route_small in a workgroup of 128 invocations or more: an expert an invocation, so the
// ranking's comparisons are spread over twice the lanes (and all of an SM's schedulers). The
// max and the sum stay invocations 0..63's, each over its two experts, tid and tid + 64 (the
// latter's logit through shared memory), so every value is the same bits as route_small's.
void route_small_wide(uint base, uint n, uint k, uint renorm) {
    uint tid = gl_LocalInvocationIndex;
    const float NEG = uintBitsToFloat(0xFF800000u); // −inf
    bool v = tid < n; // n ≤ RT_SMALL ≤ the invocations
    float l = v ? RT_LOGIT(base + tid) : NEG;
    if (tid < RT_SMALL) {
        rt_key[tid >> 2][tid & 3u] = l;
    }
    barrier();
    bool v0 = tid < 64u && tid < n;
    bool v1 = tid < 64u && tid + 64u < n;
    float l1 = v1 ? rt_key[(tid + 64u) >> 2][tid & 3u] : NEG;
    vec2 ms = rt_max_sum(l, l1, v0, v1); // its barriers also end the reads of the logits above
    CLK_MARK(6); // the softmax's max and sum (route.glsl's marks: 6 and 7)
    float p = exp(l - ms.x) / ms.y;
    float q = v && !isnan(p) ? p : NEG;
    if (tid < RT_SMALL) {
        rt_key[tid >> 2][tid & 3u] = q;
    }
    barrier();
    uint r = 0u;
    uint unused = 0u;
    rt_count(r, unused, q, NEG, tid, 0u, n, false);
    CLK_MARK(7); // the ranks counted
    rt_pick(v, r, p, tid, k);
    barrier();
    rt_renorm(k, renorm);
}

// route_token for n ≤ RT_SMALL: the same arithmetic in the same order, each invocation's two
// experts (tid, tid + 64) in registers, and the ranking reading the keys as vectors, four (16
// keys) in flight, both of its experts compared against each: 32 vector loads where the
// general ranking reads 256 scalars, eight at a time, once for each of its experts (H200,
// Qwen3-30B-A3B: ~3.5 µs of a layer before, the router 16.5 → 12.9 µs a call).
void route_small(uint base, uint n, uint k, uint renorm) {
    if (RT_WG >= 2u * 64u) {
        route_small_wide(base, n, k, renorm);
        return;
    }
    uint tid = gl_LocalInvocationIndex;
    uint e0 = tid;
    uint e1 = tid + 64u;
    bool v0 = tid < 64u && e0 < n;
    bool v1 = tid < 64u && e1 < n;
    const float NEG = uintBitsToFloat(0xFF800000u); // −inf
    float l0 = v0 ? RT_LOGIT(base + e0) : NEG;
    float l1 = v1 ? RT_LOGIT(base + e1) : NEG;
    vec2 ms = rt_max_sum(l0, l1, v0, v1);
    float p0 = exp(l0 - ms.x) / ms.y;
    float p1 = exp(l1 - ms.x) / ms.y;
    float q0 = v0 && !isnan(p0) ? p0 : NEG;
    float q1 = v1 && !isnan(p1) ? p1 : NEG;
    if (tid < 64u) {
        rt_key[e0 >> 2][e0 & 3u] = q0;
        rt_key[e1 >> 2][e1 & 3u] = q1;
    }
    barrier();
    uint r0 = 0u;
    uint r1 = 0u;
    rt_count(r0, r1, q0, q1, e0, e1, n, true);
    rt_pick(v0, r0, p0, e0, k);
    rt_pick(v1, r1, p1, e1, k);
    barrier();
    rt_renorm(k, renorm);
}

// route_token past RT_SMALL experts (or with RT_GENERAL): the picks' weights in rt_sel_p.
void route_general(uint base, uint n, uint k, uint renorm) {
    uint tid = gl_LocalInvocationIndex;
    bool w = tid < 64u;
    // The logits read once, into rt_p (each invocation keeps its own experts' there): the max,
    // the sum and the probabilities then take no further round trip to memory.
    for (uint e = tid; w && e < n; e += 64u) {
        rt_p[e] = RT_LOGIT(base + e);
    }
    float mx = uintBitsToFloat(0xFF800000u); // −inf
    for (uint e = tid; w && e < n; e += 64u) {
        mx = max(mx, rt_p[e]);
    }
    mx = rt_reduce(mx, 0u);
    float part = 0.0;
    for (uint e = tid; w && e < n; e += 64u) {
        part += exp(rt_p[e] - mx);
    }
    float sum = rt_reduce(part, 1u);
    for (uint e = tid; w && e < n; e += 64u) {
        rt_p[e] = exp(rt_p[e] - mx) / sum;
    }
    barrier();
    for (uint e = tid; w && e < n; e += 64u) {
        float p = rt_p[e];
        float q = isnan(p) ? uintBitsToFloat(0xFF800000u) : p;
        uint rank = 0u;
        // Eight of the others' p read before they are compared (one at a time, each read
        // waited for, the count was the router's longest serial stretch); a count, so the
        // order of the comparisons changes nothing.
        uint o = 0u;
        for (; o + 8u <= n; o += 8u) {
            float po[8];
            [[unroll]] for (uint u = 0u; u < 8u; u++) {
                po[u] = rt_p[o + u];
            }
            [[unroll]] for (uint u = 0u; u < 8u; u++) {
                float qo = isnan(po[u]) ? uintBitsToFloat(0xFF800000u) : po[u];
                rank += (qo > q || (qo == q && o + u < e)) ? 1u : 0u;
            }
        }
        for (; o < n; o++) {
            float po = rt_p[o];
            float qo = isnan(po) ? uintBitsToFloat(0xFF800000u) : po;
            rank += (qo > q || (qo == q && o < e)) ? 1u : 0u;
        }
        rt_pick(true, rank, p, e, k);
    }
    barrier();
    rt_renorm(k, renorm);
}

// Routes the token whose n logits start at RT_LOGIT(base) (n uniform: so are the barriers):
// afterwards rt_sel_e[j] holds pick j's expert and invocation j's rt_w its weight, j < k
// (k ≤ n), and rt_sel_p[j] holds it too.
void route_token(uint base, uint n, uint k, uint renorm) {
    if (n <= RT_SMALL && RT_GENERAL == 0u) {
        route_small(base, n, k, renorm);
    } else {
        route_general(base, n, k, renorm);
    }
    uint j = gl_LocalInvocationIndex;
    if (j < k) {
        rt_w = rt_sel_p[j];
    }
}
