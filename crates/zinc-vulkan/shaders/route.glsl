// route.glsl — mixture-of-experts routing of one token by a whole workgroup, in the numbers of
// moe_route.comp's one-pass ranking: p_e = exp(l_e − max) / Σ exp(l − max), the max and the sum
// reduced by invocations 0..63 exactly as moe_route.comp's 64 invocations do (strided loads,
// butterflies within each subgroup, then the subgroups in order), every expert's rank counted
// against all the others under (p descending, id ascending; NaN last), the picks' weights
// divided by max(Σ, 6.1035156e-5) in pick order where renorm != 0.
//
// The includer declares RT_ON (1 where it routes; the shared arrays shrink to one element
// otherwise) and RT_LOGIT(i), logit i of the router's output (after its push constants), enables
// GL_KHR_shader_subgroup_basic and _shuffle, has at least 64 invocations and subgroups that
// divide 64, and calls route_token from every invocation (it has barriers).
// Up to RT_MAXE experts and RT_MAXK picks (the host checks).

const uint RT_MAXE = 1024u;
const uint RT_MAXK = 64u;
shared float rt_p[1u + RT_ON * (RT_MAXE - 1u)];
shared float rt_sel_p[1u + RT_ON * (RT_MAXK - 1u)]; // pick j's weight
shared uint rt_sel_e[1u + RT_ON * (RT_MAXK - 1u)];  // pick j's expert
shared float rt_red[1u + RT_ON * 63u]; // the subgroups' partial max or sum

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

// Routes the token whose n logits start at RT_LOGIT(base): afterwards rt_sel_e[j] and
// rt_sel_p[j] hold pick j's expert and weight, j < k (k ≤ n).
void route_token(uint base, uint n, uint k, uint renorm) {
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
        if (rank < k) {
            rt_sel_p[rank] = isnan(p) ? 0.0 : p;
            rt_sel_e[rank] = e;
        }
    }
    barrier();
    if (tid == 0u && renorm != 0u) {
        float wsum = 0.0;
        for (uint j = 0u; j < k; j++) {
            wsum += rt_sel_p[j];
        }
        float s = max(wsum, 6.1035156e-5);
        for (uint j = 0u; j < k; j++) {
            rt_sel_p[j] = rt_sel_p[j] / s;
        }
    }
    barrier();
}
