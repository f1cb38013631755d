// dotq.glsl — integer dot products of quantized weight blocks with 8-bit activations, one
// format per compilation (included after common.glsl and dequant.glsl by matvecq.comp).
//
// The activations come from quant_act.comp: signed bytes in `xq` (four to a word) and, per
// 32-element chunk, four floats in `xs`: [d, Σq first 16, Σq last 16, f16(d·Σq)].
//
// Each format splits its blocks into units of UNIT elements (a multiple of 32 that divides the
// block) and defines
//   float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc)
// the dot product of unit u of the block at byte bb with the activations whose first word is
// xq.v[xw] and whose first chunk's floats start at xs.v[xc]. Weight quants are widened to packed
// bytes and multiplied four at a time with dotPacked4x8EXT; integer sums are exact, and scales
// are applied once per sub-block, in the arithmetic of crates/zinc-backend/src/cpu/dot.rs (a
// block's integer sum times d_w·d_x, minus the min term on the activation sums). Formats without
// a packed decoder here (Q2_K, Q3_K, MXFP4) take the per-element path at the bottom.
// The including shader enables GL_EXT_spirv_intrinsics: the dot product is SPIR-V's OpSDot
// (SPV_KHR_integer_dot_product, core in Vulkan 1.3) with the packed 4×8-bit operand format,
// declared here because the GLSL front end in use predates GL_EXT_integer_dot_product.

// OpSDot = 4450; capabilities DotProductInput4x8BitPacked = 6018, DotProduct = 6019; the
// literal 0 is PackedVectorFormat4x8Bit.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6018, 6019], id = 4450)
int sdot_packed(int a, int b, spirv_literal int format);

// Σ of the products of the four signed bytes of a with those of b.
int dp4(uint a, uint b) {
    return sdot_packed(int(a), int(b), 0);
}

const uint LO4 = 0x0F0F0F0Fu;

#if defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
// The sixteen IQ4 levels as integers (dequant.glsl's IQ4_LEVELS).
const int IQ4_K[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
// Four nibbles (one per byte of n) → four signed level bytes.
uint levels(uint n) {
    return uint(IQ4_K[n & 15u] & 255) | (uint(IQ4_K[(n >> 8) & 15u] & 255) << 8)
        | (uint(IQ4_K[(n >> 16) & 15u] & 255) << 16) | (uint(IQ4_K[(n >> 24) & 15u] & 255) << 24);
}
#endif

// Activation words xw .. xw + 3 in one 16-byte read (xw is a multiple of 4: units start at
// multiples of 32 elements and rows hold a multiple of 32).
uvec4 xq4(Words xq, uint xw) {
    return Quads(xq).v[xw >> 2];
}

#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// Unit = 64 elements = sub-blocks 2u (low nibbles) and 2u+1 (high nibbles) of 32 qs bytes.
const uint UNIT = 64u;
// Byte i of the 12 packed scale bytes, held as three words.
uint sbyte(uint s[3], uint i) {
    return (s[i >> 2] >> ((i & 3u) * 8u)) & 0xFFu;
}
// get_scale_min_k4: sub-block j's 6-bit scale (.x) and min (.y).
uvec2 scale_min(uint s[3], uint j) {
    if (j < 4u) {
        return uvec2(sbyte(s, j) & 63u, sbyte(s, j + 4u) & 63u);
    }
    uint b4 = sbyte(s, j + 4u);
    return uvec2((b4 & 15u) | ((sbyte(s, j - 4u) >> 6) << 4),
                 (b4 >> 4) | ((sbyte(s, j) >> 6) << 4));
}
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
    uint wb = bb >> 2; // blocks are 16-byte aligned (144 and 176 bytes)
    uint s[3] = uint[3](w.v[wb + 1u], w.v[wb + 2u], w.v[wb + 3u]);
    uint dm = w.v[wb];
    uvec2 sm0 = scale_min(s, 2u * u);
    uvec2 sm1 = scale_min(s, 2u * u + 1u);
#if defined(TYPE_Q4_K)
    uint qb = wb + 4u + 8u * u;
#else
    uint qb = wb + 12u + 8u * u;
    uint hb = wb + 4u;
#endif
    // 16-byte reads: blocks are 16-byte aligned, qs (and Q5_K's qh) at 16-byte offsets.
    Quads wq = Quads(w);
    uvec4 qv[2] = uvec4[2](wq.v[qb >> 2], wq.v[(qb >> 2) + 1u]);
#if defined(TYPE_Q5_K)
    uvec4 hv[2] = uvec4[2](wq.v[hb >> 2], wq.v[(hb >> 2) + 1u]);
#endif
    uvec4 xv[4] = uvec4[4](xq4(xq, xw), xq4(xq, xw + 4u), xq4(xq, xw + 8u), xq4(xq, xw + 12u));
    int lo = 0, hi = 0;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint q = qv[i >> 2][i & 3u];
        uint ql = q & LO4;
        uint qh = (q >> 4) & LO4;
#if defined(TYPE_Q5_K)
        uint h = hv[i >> 2][i & 3u];
        ql |= ((h >> (2u * u)) & 0x01010101u) << 4;
        qh |= ((h >> (2u * u + 1u)) & 0x01010101u) << 4;
#endif
        lo += dp4(ql, xv[i >> 2][i & 3u]);
        hi += dp4(qh, xv[2u + (i >> 2)][i & 3u]);
    }
    float dx = xs.v[xc];
    int bs0 = int(xs.v[xc + 1u] + xs.v[xc + 2u]);
    int bs1 = int(xs.v[xc + 5u] + xs.v[xc + 6u]);
    int sumi = int(sm0.x) * lo + int(sm1.x) * hi;
    int mins = int(sm0.y) * bs0 + int(sm1.y) * bs1;
    float d = f16_bits_to_f32(dm & 0xFFFFu);
    float dmin = f16_bits_to_f32(dm >> 16);
    return d * dx * float(sumi) - dmin * dx * float(mins);
}

#elif defined(TYPE_Q6_K)
// Unit = 128 elements = one half of the block: 64 ql bytes, 32 qh bytes, 8 scales. On the
// device every part starts 16-byte aligned (dequant.glsl's grouped layout; bb names the block
// by its d), so every part is read as 16-byte vectors.
const uint UNIT = 128u;
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
    Quads wq = Quads(w);
    uint bd = q6_body(bb);
    uint lq = (bd + 64u * u) >> 4;
    uint hq = (bd + 128u + 32u * u) >> 4;
    uvec4 ql[4] = uvec4[4](wq.v[lq], wq.v[lq + 1u], wq.v[lq + 2u], wq.v[lq + 3u]);
    uvec4 qh[2] = uvec4[2](wq.v[hq], wq.v[hq + 1u]);
    uint scw = (bd + 192u + 8u * u) >> 2;
    uint sc0 = w.v[scw];
    uint sc1 = w.v[scw + 1u];
    uvec4 xv[8];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        xv[i] = xq4(xq, xw + 4u * i);
    }
    int acc = 0;
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        [[unroll]] for (uint half_ = 0u; half_ < 2u; half_++) {
            int is = 0;
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                uint wi = 4u * half_ + i;
                uint li = 8u * (k & 1u) + wi;
                uint l = ql[li >> 2][li & 3u];
                uint lo = (k < 2u) ? (l & LO4) : ((l >> 4) & LO4);
                uint v = lo | (((qh[wi >> 2][wi & 3u] >> (2u * k)) & 0x03030303u) << 4);
                is += dp4(v, xv[2u * k + half_][i]);
            }
            int sx = int(xs.v[xc + 4u * k + 1u + half_]);
            uint j = 2u * k + half_;
            int sc = bitfieldExtract(int(j < 4u ? sc0 : sc1), int((j & 3u) * 8u), 8);
            acc += sc * (is - 32 * sx);
        }
    }
    float d = rd_f16(w, bb);
    return d * xs.v[xc] * float(acc);
}

#elif defined(TYPE_Q8_0)
const uint UNIT = 32u;
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
    int is = 0;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        is += dp4(rd_u32(w, bb + 2u + 4u * i), xq.v[xw + i]);
    }
    return (rd_f16(w, bb) * xs.v[xc]) * float(is);
}

#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1) || defined(TYPE_IQ4_NL)
// 32-element blocks of 16 nibble bytes: low nibbles are elements 0–15, high nibbles 16–31.
const uint UNIT = 32u;
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
#if defined(TYPE_Q4_1)
    const uint QS = 4u;
#else
    const uint QS = 2u;
#endif
    int is = 0;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint q = rd_u32(w, bb + QS + 4u * i);
#if defined(TYPE_IQ4_NL)
        is += dp4(levels(q & LO4), xq.v[xw + i]);
        is += dp4(levels((q >> 4) & LO4), xq.v[xw + 4u + i]);
#else
        is += dp4(q & LO4, xq.v[xw + i]);
        is += dp4((q >> 4) & LO4, xq.v[xw + 4u + i]);
#endif
    }
    float d = rd_f16(w, bb);
#if defined(TYPE_Q4_0)
    is -= 8 * int(xs.v[xc + 1u] + xs.v[xc + 2u]);
#endif
    float r = (d * xs.v[xc]) * float(is);
#if defined(TYPE_Q4_1)
    r += rd_f16(w, bb + 2u) * xs.v[xc + 3u];
#endif
    return r;
}

#elif defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
const uint UNIT = 32u;
// Bits 0–3 of b to bit 4 of bytes 0–3.
uint spread4(uint b) {
    return ((b & 1u) | ((b & 2u) << 7) | ((b & 4u) << 14) | ((b & 8u) << 21)) << 4;
}
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
#if defined(TYPE_Q5_0)
    const uint QH = 2u, QS = 6u;
#else
    const uint QH = 4u, QS = 8u;
#endif
    uint qh = rd_u32(w, bb + QH);
    int is = 0;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint q = rd_u32(w, bb + QS + 4u * i);
        is += dp4((q & LO4) | spread4((qh >> (4u * i)) & 15u), xq.v[xw + i]);
        is += dp4(((q >> 4) & LO4) | spread4((qh >> (16u + 4u * i)) & 15u), xq.v[xw + 4u + i]);
    }
    float d = rd_f16(w, bb);
#if defined(TYPE_Q5_0)
    is -= 16 * int(xs.v[xc + 1u] + xs.v[xc + 2u]);
    return (d * xs.v[xc]) * float(is);
#else
    return (d * xs.v[xc]) * float(is) + rd_f16(w, bb + 2u) * xs.v[xc + 3u];
#endif
}

#elif defined(TYPE_IQ4_XS)
// Unit = one 32-element sub-block: 16 nibble bytes at 8 + 16u, 6-bit scale ls − 32.
const uint UNIT = 32u;
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
    uint scales_h = rd_u16(w, bb + 2u);
    uint ls = ((rd_u8(w, bb + 4u + u / 2u) >> (4u * (u % 2u))) & 15u)
            | (((scales_h >> (2u * u)) & 3u) << 4);
    int is = 0;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint q = w.v[((bb + 8u + 16u * u) >> 2) + i]; // blocks are 8-byte aligned (136 bytes)
        is += dp4(levels(q & LO4), xq.v[xw + i]);
        is += dp4(levels((q >> 4) & LO4), xq.v[xw + 4u + i]);
    }
    return rd_f16(w, bb) * xs.v[xc] * float((int(ls) - 32) * is);
}

#else
// Per element: the dequantized weight times the integer activation, scaled by d_x per chunk.
const uint UNIT = 32u;
float unit_dot(Words w, uint bb, uint u, Words xq, Floats xs, uint xw, uint xc) {
    float s = 0.0;
    [[unroll]] for (uint e = 0u; e < 32u; e++) {
        int xv = bitfieldExtract(int(xq.v[xw + e / 4u]), int((e % 4u) * 8u), 8);
        s += dequant_block(w, bb, 32u * u + e) * float(xv);
    }
    return s * xs.v[xc];
}
#endif
