// act.glsl — the gate activations of gated feed-forward blocks, shared by elementwise.comp and
// glu_quant.comp (so both produce the same bits).

float silu(float g) {
    return g / (1.0 + exp(-g));
}

// GELU as the CPU backend (and ggml's CPU backend) computes it: the input rounded to f16 looks
// up `table` (65,536 f16-rounded results indexed by the f16 bits, built on the host by the CPU
// backend's own code), so both backends produce the same bits.
float gelu(Floats table, float g) {
    if (g <= -10.0) {
        return 0.0;
    }
    if (g >= 10.0) {
        return g;
    }
    return table.v[packHalf2x16(vec2(g, 0.0)) & 0xffffu];
}
