// dfloat.glsl — double-float sums (a value as hi + lo, added with error-free two-sums) and the
// RMSNorm scale of such a sum of squares. Shared by rms.glsl (rms_norm.comp, norm_quant.comp,
// qk_prep.comp), matvec_dec.comp's fused norm and rscale.comp, so all of them round the same way.

// (hi, lo) += (b, b_lo) as double-floats (an error-free two-sum of the high parts).
void two_sum_into(inout float hi, inout float lo, float b, float b_lo) {
    precise float a = hi;
    precise float s = a + b;
    precise float bp = s - a;
    precise float e = (a - (s - bp)) + (b - bp);
    hi = s;
    lo = lo + b_lo + e;
}

// (hi, lo) += v² (the square rounded to f32 first, as every includer does).
void add_square(inout float hi, inout float lo, float v) {
    precise float p = v * v;
    precise float s = hi + p;
    precise float bp = s - hi;
    lo += (hi - (s - bp)) + (p - bp);
    hi = s;
}

// 1 / sqrt(mean + eps) for the mean (hi + lo) / n rounded once, as (f64 sum / n) as f32 is.
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
