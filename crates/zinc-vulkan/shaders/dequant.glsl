// dequant.glsl — per-element dequantization of GGML weight rows, one format per compilation.
//
// Included (after common.glsl) by the per-format shaders; build.rs defines exactly one
// TYPE_<FMT> (F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS MXFP4).
// Defines:
//   const uint BLOCK_ELEMS;                          elements per block (1, 32 or 256)
//   const uint BLOCK_BYTES;                          bytes per block
//   uint block_byte(uint row_byte, uint b);          the byte naming block b of a row (its
//                                                    start: row_byte + b·BLOCK_BYTES; Q6_K's
//                                                    grouped device layout: its d's byte)
//   float dequant_block(Words w, uint bb, uint e);   element e of the block named by byte bb
//   float dequant(Words w, uint row_byte, uint i);   element i of the row starting at byte row_byte
// dequant is a pure function of (row_byte, i): block i / BLOCK_ELEMS at
// block_byte(row_byte, i / BLOCK_ELEMS), element i % BLOCK_ELEMS within it.
//
// Layouts and arithmetic follow crates/zinc-quant/src/{float,legacy,kquants,iquants,mxfp4}.rs
// (bit-exact with gguf-py / ggml's dequantize_row_*), ARCHITECTURES.md §11. Offsets below are
// bytes within a block. Row starts are even except possibly for MXFP4 (17-byte blocks), which
// reads single bytes only; every f16/u16/u32 field sits at an even offset.

#if defined(TYPE_F32)
// ---- F32: plain little-endian f32 ------------------------------------------------------------
const uint BLOCK_ELEMS = 1u;
const uint BLOCK_BYTES = 4u;
float dequant_block(Words w, uint bb, uint e) {
    return uintBitsToFloat(rd_u32(w, bb));
}

#elif defined(TYPE_F16)
// ---- F16: IEEE binary16 ------------------------------------------------------------------------
const uint BLOCK_ELEMS = 1u;
const uint BLOCK_BYTES = 2u;
float dequant_block(Words w, uint bb, uint e) {
    return rd_f16(w, bb);
}

#elif defined(TYPE_BF16)
// ---- BF16: the upper half of an f32 -----------------------------------------------------------
const uint BLOCK_ELEMS = 1u;
const uint BLOCK_BYTES = 2u;
float dequant_block(Words w, uint bb, uint e) {
    return rd_bf16(w, bb);
}

#elif defined(TYPE_Q4_0)
// ---- Q4_0 (32 el, 18 B): d:f16 @0, qs[16] @2; y = (q − 8)·d ----------------------------------
// Element e: low nibble of qs[e] for e < 16, high nibble of qs[e − 16] for e ≥ 16.
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 18u;
float dequant_block(Words w, uint bb, uint e) {
    float d = rd_f16(w, bb);
    uint q = (rd_u8(w, bb + 2u + (e & 15u)) >> ((e >> 4) * 4u)) & 15u;
    return d * float(int(q) - 8);
}

#elif defined(TYPE_Q4_1)
// ---- Q4_1 (32 el, 20 B): d:f16 @0, m:f16 @2, qs[16] @4; y = q·d + m -------------------------
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 20u;
float dequant_block(Words w, uint bb, uint e) {
    float d = rd_f16(w, bb);
    float m = rd_f16(w, bb + 2u);
    uint q = (rd_u8(w, bb + 4u + (e & 15u)) >> ((e >> 4) * 4u)) & 15u;
    return d * float(q) + m;
}

#elif defined(TYPE_Q5_0)
// ---- Q5_0 (32 el, 22 B): d:f16 @0, qh:u32 @2, qs[16] @6; y = (q − 16)·d ----------------------
// q = nibble (as Q4_0) | (bit e of qh) << 4.
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 22u;
float dequant_block(Words w, uint bb, uint e) {
    float d = rd_f16(w, bb);
    uint qh = rd_u32(w, bb + 2u);
    uint lo = (rd_u8(w, bb + 6u + (e & 15u)) >> ((e >> 4) * 4u)) & 15u;
    uint q = lo | (((qh >> e) & 1u) << 4);
    return d * float(int(q) - 16);
}

#elif defined(TYPE_Q5_1)
// ---- Q5_1 (32 el, 24 B): d:f16 @0, m:f16 @2, qh:u32 @4, qs[16] @8; y = q·d + m ---------------
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 24u;
float dequant_block(Words w, uint bb, uint e) {
    float d = rd_f16(w, bb);
    float m = rd_f16(w, bb + 2u);
    uint qh = rd_u32(w, bb + 4u);
    uint lo = (rd_u8(w, bb + 8u + (e & 15u)) >> ((e >> 4) * 4u)) & 15u;
    uint q = lo | (((qh >> e) & 1u) << 4);
    return d * float(q) + m;
}

#elif defined(TYPE_Q8_0)
// ---- Q8_0 (32 el, 34 B): d:f16 @0, qs[32]:i8 @2; y = q·d -------------------------------------
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 34u;
float dequant_block(Words w, uint bb, uint e) {
    float d = rd_f16(w, bb);
    return float(rd_i8(w, bb + 2u + e)) * d;
}

#elif defined(TYPE_Q2_K)
// ---- Q2_K (256 el, 84 B): scales[16] @0 (low nibble scale, high nibble min), qs[64] @16,
// d:f16 @80, dmin:f16 @82. Element e: H = e/128, J = (e%128)/32, l = e%32;
// q = (qs[32H + l] >> 2J) & 3; sc = scales[e/16]; y = (d·(sc&15))·q − dmin·(sc>>4).
const uint BLOCK_ELEMS = 256u;
const uint BLOCK_BYTES = 84u;
float dequant_block(Words w, uint bb, uint e) {
    uint h = e / 128u, j = (e % 128u) / 32u, l = e % 32u;
    uint q = (rd_u8(w, bb + 16u + 32u * h + l) >> (2u * j)) & 3u;
    uint sc = rd_u8(w, bb + e / 16u);
    float d = rd_f16(w, bb + 80u);
    float dmin = rd_f16(w, bb + 82u);
    float dl = d * float(sc & 15u);
    float ml = dmin * float(sc >> 4);
    return dl * float(q) - ml;
}

#elif defined(TYPE_Q3_K)
// ---- Q3_K (256 el, 110 B): hmask[32] @0, qs[64] @32, scales[12] @96, d:f16 @108.
// Scale j = e/16 (6 bits, offset +32): lo = j<8 ? s[j]&15 : s[j−8]>>4,
// hi = (s[8 + j%4] >> 2(j/4)) & 3. Element e (H, J, l as Q2_K): q2 = (qs[32H+l] >> 2J) & 3,
// high bit = (hmask[l] >> (e/32)) & 1; q = q2 − (high ? 0 : 4); y = (d·(sc − 32))·q.
const uint BLOCK_ELEMS = 256u;
const uint BLOCK_BYTES = 110u;
float dequant_block(Words w, uint bb, uint e) {
    uint h = e / 128u, j = (e % 128u) / 32u, l = e % 32u;
    uint sj = e / 16u;
    uint slo = (sj < 8u) ? (rd_u8(w, bb + 96u + sj) & 15u) : (rd_u8(w, bb + 96u + sj - 8u) >> 4);
    uint shi = (rd_u8(w, bb + 96u + 8u + sj % 4u) >> (2u * (sj / 4u))) & 3u;
    int sc = int(slo | (shi << 4)) - 32;
    int q2 = int((rd_u8(w, bb + 32u + 32u * h + l) >> (2u * j)) & 3u);
    uint high = (rd_u8(w, bb + l) >> (e / 32u)) & 1u;
    int q = q2 - ((high == 1u) ? 0 : 4);
    float d = rd_f16(w, bb + 108u);
    float dl = d * float(sc);
    return dl * float(q);
}

#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// ---- Q4_K (256 el, 144 B): d:f16 @0, dmin:f16 @2, scales[12] @4, qs[128] @16.
// ---- Q5_K (256 el, 176 B): d:f16 @0, dmin:f16 @2, scales[12] @4, qh[32] @16, qs[128] @48.
// Sub-block sub = e/32 has a 6-bit scale s and min m packed in the 12 bytes b (get_scale_min_k4):
//   sub < 4: s = b[sub] & 63, m = b[sub+4] & 63
//   sub ≥ 4: s = (b[sub+4] & 15) | ((b[sub−4] >> 6) << 4), m = (b[sub+4] >> 4) | ((b[sub] >> 6) << 4)
// q = (qs[32·(sub/2) + l] >> 4·(sub%2)) & 15 (l = e%32); Q5_K adds ((qh[l] >> sub) & 1) << 4.
// y = (d·s)·q − dmin·m.
const uint BLOCK_ELEMS = 256u;
#if defined(TYPE_Q4_K)
const uint BLOCK_BYTES = 144u;
const uint QS_OFF = 16u;
#else
const uint BLOCK_BYTES = 176u;
const uint QS_OFF = 48u;
#endif
// get_scale_min_k4: sub-block `sub`'s 6-bit scale (.x) and min (.y), the 12 scale bytes at sb.
uvec2 scale_min_k4(Words w, uint sb, uint sub) {
    if (sub < 4u) {
        return uvec2(rd_u8(w, sb + sub) & 63u, rd_u8(w, sb + sub + 4u) & 63u);
    }
    uint b4 = rd_u8(w, sb + sub + 4u);
    return uvec2((b4 & 15u) | ((rd_u8(w, sb + sub - 4u) >> 6) << 4),
                 (b4 >> 4) | ((rd_u8(w, sb + sub) >> 6) << 4));
}
float dequant_block(Words w, uint bb, uint e) {
    uint sub = e / 32u, l = e % 32u;
    uvec2 sm = scale_min_k4(w, bb + 4u, sub);
    uint s = sm.x, m = sm.y;
    uint q = (rd_u8(w, bb + QS_OFF + 32u * (sub / 2u) + l) >> (4u * (sub % 2u))) & 15u;
#if defined(TYPE_Q5_K)
    q |= ((rd_u8(w, bb + 16u + l) >> sub) & 1u) << 4;
#endif
    float d = rd_f16(w, bb);
    float dmin = rd_f16(w, bb + 2u);
    float d1 = d * float(s);
    float m1 = dmin * float(m);
    return d1 * float(q) - m1;
}

#elif defined(TYPE_Q6_K)
// ---- Q6_K (256 el, 210 B): ql[128] @0, qh[64] @128, scales[16]:i8 @192, d:f16 @208.
// Element e: H = e/128, k = (e%128)/32, l = e%32. Low 4 bits from ql[64H + l + 32(k&1)]
// (low nibble for k < 2, high nibble for k ≥ 2); high 2 bits (qh[32H + l] >> 2k) & 3;
// q = (lo | hi << 4) − 32; y = (d·scales[e/16])·q.
// On the device a row's blocks go in groups of 8 (VulkanBackend::weight, Q6_K_GROUP): the
// group's 8 d in one 16-byte vector, then each block's other 208 bytes (ql, qh, scales) as
// above — every part 16-byte aligned, 210 bytes a block. A block is named by the byte of its d
// (block_byte); with groups 16-byte aligned (rows are a multiple of 16 bytes), that byte gives
// the group (its bits above 4) and the block within it (bits 1–3): q6_body finds the rest.
const uint BLOCK_ELEMS = 256u;
const uint BLOCK_BYTES = 210u; // nominal: a block's place is block_byte's, not b · 210
#define HAS_BLOCK_BYTE 1
uint block_byte(uint row_byte, uint b) {
    return row_byte + 1680u * (b >> 3) + 2u * (b & 7u);
}
// The byte of ql[0] of the block whose d is at byte bb (qh at + 128, scales at + 192).
uint q6_body(uint bb) {
    return (bb & ~15u) + 16u + 208u * ((bb >> 1) & 7u);
}
float dequant_block(Words w, uint bb, uint e) {
    uint h = e / 128u, k = (e % 128u) / 32u, l = e % 32u;
    uint bd = q6_body(bb);
    uint byte = rd_u8(w, bd + 64u * h + l + 32u * (k & 1u));
    uint lo = (k < 2u) ? (byte & 15u) : (byte >> 4);
    uint hi = (rd_u8(w, bd + 128u + 32u * h + l) >> (2u * k)) & 3u;
    int q = int(lo | (hi << 4)) - 32;
    float d = rd_f16(w, bb);
    float dl = d * float(rd_i8(w, bd + 192u + e / 16u));
    return dl * float(q);
}

#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
// The sixteen IQ4 levels (zinc_quant::IQ4_LEVELS, ggml's kvalues_iq4nl).
const float IQ4_LEVELS[16] = float[16](
    -127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
    1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);

#if defined(TYPE_IQ4_NL)
// ---- IQ4_NL (32 el, 18 B): d:f16 @0, qs[16] @2; y[j] = d·K[qs[j]&15], y[j+16] = d·K[qs[j]>>4].
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 18u;
float dequant_block(Words w, uint bb, uint e) {
    float d = rd_f16(w, bb);
    uint q = (rd_u8(w, bb + 2u + (e & 15u)) >> ((e >> 4) * 4u)) & 15u;
    return d * IQ4_LEVELS[q];
}
#else
// ---- IQ4_XS (256 el, 136 B): d:f16 @0, scales_h:u16 @2, scales_l[4] @4, qs[128] @8.
// Sub-block ib = e/32: ls = ((scales_l[ib/2] >> 4(ib%2)) & 15) | (((scales_h >> 2ib) & 3) << 4),
// dl = d·(ls − 32); then as IQ4_NL on qs[16ib .. 16ib+16] with r = e%32.
const uint BLOCK_ELEMS = 256u;
const uint BLOCK_BYTES = 136u;
float dequant_block(Words w, uint bb, uint e) {
    uint ib = e / 32u, r = e % 32u;
    float d = rd_f16(w, bb);
    uint scales_h = rd_u16(w, bb + 2u);
    uint ls = ((rd_u8(w, bb + 4u + ib / 2u) >> (4u * (ib % 2u))) & 15u)
            | (((scales_h >> (2u * ib)) & 3u) << 4);
    float dl = d * float(int(ls) - 32);
    uint q = (rd_u8(w, bb + 8u + 16u * ib + (r & 15u)) >> ((r >> 4) * 4u)) & 15u;
    return dl * IQ4_LEVELS[q];
}
#endif

#elif defined(TYPE_MXFP4)
// ---- MXFP4 (32 el, 17 B): e:u8 @0 (E8M0 shared exponent), qs[16] @1.
// d = 2^(e−127)/2 as ggml_e8m0_to_fp32_half (e < 2: the f32 denormal 0x00200000 << e);
// y[j] = d·F[qs[j]&15], y[j+16] = d·F[qs[j]>>4], F = E2M1 values doubled, bit 3 the sign.
// Blocks are 17 bytes, so rows may start at odd bytes: only single bytes are read.
const float MXFP4_LEVELS[16] = float[16](
    0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
    0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);
const uint BLOCK_ELEMS = 32u;
const uint BLOCK_BYTES = 17u;
float e8m0_to_f32_half(uint e) {
    uint bits = (e < 2u) ? (0x00200000u << e) : ((e - 1u) << 23);
    return uintBitsToFloat(bits);
}
float dequant_block(Words w, uint bb, uint e) {
    float d = e8m0_to_f32_half(rd_u8(w, bb));
    uint q = (rd_u8(w, bb + 1u + (e & 15u)) >> ((e >> 4) * 4u)) & 15u;
    return d * MXFP4_LEVELS[q];
}

#else
#error "dequant.glsl: no TYPE_<FMT> defined"
#endif

#ifndef HAS_BLOCK_BYTE
// The byte at which block b of the row starting at byte row_byte starts (Q6_K: see above).
uint block_byte(uint row_byte, uint b) {
    return row_byte + b * BLOCK_BYTES;
}
#endif

// Element i of the row starting at byte row_byte. Kernels that walk whole blocks call
// dequant_block(w, block_byte, e) directly, so a block's scales are read once (the compiler
// shares the header loads across an unrolled loop over e).
float dequant(Words w, uint row_byte, uint i) {
    return dequant_block(w, block_byte(row_byte, i / BLOCK_ELEMS), i % BLOCK_ELEMS);
}

// Elements e0 .. e0 + 15 of the block at byte bb (e0 a multiple of 16), decoding the block's
// (sub-block's) scales once: the common formats of prompt weights read their quants as words;
// the others call dequant_block per element.
void dequant16(Words w, uint bb, uint e0, out float v[16]) {
#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
    uint sub = e0 / 32u, l0 = e0 % 32u;
    uvec2 sm = scale_min_k4(w, bb + 4u, sub);
    uint dm = w.v[bb >> 2];
    float d1 = f16_bits_to_f32(dm & 0xFFFFu) * float(sm.x);
    float m1 = f16_bits_to_f32(dm >> 16) * float(sm.y);
    uint qw = (bb + QS_OFF + 32u * (sub / 2u) + l0) >> 2; // 16-byte aligned
    uint sh = 4u * (sub % 2u);
#if defined(TYPE_Q5_K)
    uint hw = (bb + 16u + l0) >> 2;
#endif
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint q = w.v[qw + i] >> sh;
#if defined(TYPE_Q5_K)
        uint h = w.v[hw + i] >> sub;
#endif
        [[unroll]] for (uint b = 0u; b < 4u; b++) {
            uint qi = (q >> (8u * b)) & 15u;
#if defined(TYPE_Q5_K)
            qi |= ((h >> (8u * b)) & 1u) << 4;
#endif
            v[4u * i + b] = d1 * float(qi) - m1;
        }
    }
#elif defined(TYPE_Q6_K)
    uint h = e0 / 128u, k = (e0 % 128u) / 32u, l0 = e0 % 32u;
    uint bd = q6_body(bb);
    uint qlb = bd + 64u * h + l0 + 32u * (k & 1u);
    uint qhb = bd + 128u + 32u * h + l0;
    uint lsh = (k < 2u) ? 0u : 4u;
    float dl = rd_f16(w, bb) * float(rd_i8(w, bd + 192u + e0 / 16u));
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint ql = rd_u32(w, qlb + 4u * i) >> lsh;
        uint qh = rd_u32(w, qhb + 4u * i) >> (2u * k);
        [[unroll]] for (uint b = 0u; b < 4u; b++) {
            int q = int(((ql >> (8u * b)) & 15u) | (((qh >> (8u * b)) & 3u) << 4)) - 32;
            v[4u * i + b] = dl * float(q);
        }
    }
#elif defined(TYPE_Q8_0)
    float d = rd_f16(w, bb);
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint q = rd_u32(w, bb + 2u + e0 + 4u * i);
        [[unroll]] for (uint b = 0u; b < 4u; b++) {
            v[4u * i + b] = d * float(bitfieldExtract(int(q), int(8u * b), 8));
        }
    }
#else
    [[unroll]] for (uint e = 0u; e < 16u; e++) {
        v[e] = dequant(w, bb, e0 + e); // also right where blocks hold fewer than 16
    }
#endif
}
