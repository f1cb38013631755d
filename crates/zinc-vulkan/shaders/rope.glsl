// rope.glsl — rotary position embedding of one pair, shared by rope.comp, qk_prep.comp and
// attn_dec_prep (so all produce the same bits).

// t reduced to [−π, π] (Cody–Waite, 2π = C1 + C2 with C1 exact in 8 bits) so that sin/cos stay
// accurate for large angles (long contexts) on devices whose sin/cos only promise [−π, π].
float reduce_angle(float t) {
    const float INV_2PI = 0.15915494309189535;
    const float C1 = 6.28125;
    const float C2 = 1.9353071795864769e-3;
    float k = floor(t * INV_2PI + 0.5);
    precise float r = (t - k * C1) - k * C2; // no reassociation into t − k·2π
    return r;
}

// (x0, x1) rotated by the angle whose cosine and sine are cs: (x0·cos − x1·sin, x0·sin + x1·cos),
// the products unfused (as the CPU backend computes them). With the host's table (RopeParams::
// cos_sin, for one row) the kernels call this directly.
vec2 rope_rotate(vec2 x, vec2 cs) {
    precise float y0 = x.x * cs.x - x.y * cs.y;
    precise float y1 = x.x * cs.y + x.y * cs.x;
    return vec2(y0, y1);
}

// Pair i < n_rot/2 at position pos: theta = pos · freq_scale · freq_base^(−2i/n_rot), the power
// stepped in f32 as the CPU backend (and ggml) does (theta_scale = freq_base^(−2/n_rot),
// multiplied i times); (x0, x1) → (x0·cos − x1·sin, x0·sin + x1·cos).
vec2 rope_pair(vec2 x, uint pos, uint i, uint n_rot, float freq_base, float freq_scale) {
    float theta_scale = pow(freq_base, -2.0 / float(n_rot));
    float theta = float(pos);
    for (uint k = 0u; k < i; k++) {
        theta *= theta_scale;
    }
    float t = reduce_angle(freq_scale * theta);
    return rope_rotate(x, vec2(cos(t), sin(t)));
}
