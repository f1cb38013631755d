// dfloat.glsl — double-float sums (a value as hi + lo, added with error-free two-sums) and the
// RMSNorm scale of such a sum of squares: rms.glsl's arithmetic (rms_norm.comp, norm_quant.comp,
// qk_prep.comp) and that of matvec_dec.comp's fused norm, the mat-vecs that apply
// its scale and rscale.comp.

// (hi, lo) += (b, b_lo) as double-floats (an error-free two-sum of the high parts).
void two_sum_into(inout float hi, inout float lo, float b, float b_lo) {
    precise float a = hi;
    precise float s = a + b;
    precise float bp = s - a;
    precise float e = (a - (s - bp)) + (b - bp);
    hi = s;
    lo = lo + b_lo + e;
}

#ifdef DFLOAT_SHUFFLE
// One level of a butterfly over double-floats: (hi, lo) paired with lane ^ st's, the lower
// lane's first (`first`: this lane is the lower), so both partners end with the same sum
// (rms.glsl's order, which matvec.comp's router-side norm repeats). For includers that
// enable subgroup shuffles and define DFLOAT_SHUFFLE.
void two_sum_pair(inout float hi, inout float lo, uint st, bool first) {
    float bh = subgroupShuffleXor(hi, st);
    float bl = subgroupShuffleXor(lo, st);
    float ah = first ? hi : bh, al = first ? lo : bl;
    float ch = first ? bh : hi, cl = first ? bl : lo;
    hi = ah;
    lo = al;
    two_sum_into(hi, lo, ch, cl);
}
#endif

// (hi, lo) += v², the square rounded to f32 first (every step precise).
void add_square(inout float hi, inout float lo, float v) {
    precise float h = hi;
    precise float p = v * v;
    precise float s = h + p;
    precise float bp = s - h;
    precise float l = lo + ((h - (s - bp)) + (p - bp));
    hi = s;
    lo = l;
}

// 1 / sqrt(mean + eps) for the mean (hi + lo) / n rounded once, as (f64 sum / n) as f32 is
// (rms.glsl's ending; mean = (hi + lo) / n rounded once, as (f64 sum / n) as f32 is).
float mean_scale(float hi, float lo, uint n, float eps) {
    precise float fn = float(n);
    precise float q = hi / fn;
    precise float r = fma(-q, fn, hi) + lo;
    precise float mean = q + r / fn;
    precise float scale = 1.0 / sqrt(mean + eps);
    return scale;
}

// The RMSNorm scale of row `row` from the per-256-value partial sums of squares a fused norm
// left (matvec_dec.comp: (hi, lo) pairs at p[2 (row · n / 256 + b)]), added in block order.
float parts_scale(Floats p, uint row, uint n, float eps) {
    uint nb = n / 256u;
    precise float hi = 0.0;
    precise float lo = 0.0;
    for (uint b = 0u; b < nb; b++) {
        uint at = 2u * (row * nb + b);
        two_sum_into(hi, lo, p.v[at], p.v[at + 1u]);
    }
    return mean_scale(hi, lo, n, eps);
}
