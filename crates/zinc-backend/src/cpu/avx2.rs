//! AVX2 dot products for the formats real models are made of (Q8_0, Q4_0, Q5_0, IQ4_NL, Q4_K,
//! Q6_K). Each computes exactly the integer sums of `dot.rs` (per 32-element block or 16-element
//! group), 32 products at a time: `maddubs` multiplies unsigned by signed bytes into i16 pairs
//! (signed weights go through the sign trick: |w| · (x · sign w)), `madd` widens to i32.
//! Results differ from the scalar path only in the order of the f32 additions.

#![cfg(target_arch = "x86_64")]
// Kernel loops walk several arrays in lockstep by index; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::*;

use zinc_gguf::GgmlType;

use super::dot::{ActRow, BlockQ8, BlockQ8K};

use zinc_quant::IQ4_LEVELS;

/// f16 → f32 with the F16C instruction (inlined, unlike the `half` crate's call).
#[inline(always)]
unsafe fn f16_at(b: &[u8], at: usize) -> f32 {
    let h = u16::from_le_bytes([b[at], b[at + 1]]);
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h as i32)))
}

/// The formats with an AVX2 kernel here.
pub fn has_kernel(ty: GgmlType) -> bool {
    matches!(
        ty,
        GgmlType::Q8_0
            | GgmlType::Q4_0
            | GgmlType::Q5_0
            | GgmlType::IQ4_NL
            | GgmlType::Q4_K
            | GgmlType::Q6_K
    )
}

/// Σ of signed-byte products of `x` and `y`, as 8 f32 lanes.
#[inline(always)]
unsafe fn mul_sum_i8(x: __m256i, y: __m256i) -> __m256 {
    let ax = _mm256_sign_epi8(x, x);
    let sy = _mm256_sign_epi8(y, x);
    let dot16 = _mm256_maddubs_epi16(ax, sy);
    _mm256_cvtepi32_ps(_mm256_madd_epi16(dot16, _mm256_set1_epi16(1)))
}

#[inline(always)]
unsafe fn hsum(v: __m256) -> f32 {
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps(v, 1);
    let s = _mm_add_ps(lo, hi);
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_movehdup_ps(s));
    _mm_cvtss_f32(s)
}

#[inline(always)]
unsafe fn hsum_i32(v: __m256i) -> i32 {
    let lo = _mm256_castsi256_si128(v);
    let hi = _mm256_extracti128_si256(v, 1);
    let s = _mm_add_epi32(lo, hi);
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
    _mm_cvtsi128_si32(s)
}

/// 16 bytes of nibbles → 32 bytes: low nibbles (elements 0..16) in the low lane, high in the high.
#[inline(always)]
unsafe fn nibbles(p: *const u8) -> __m256i {
    let b = _mm_loadu_si128(p as *const __m128i);
    let m = _mm_set1_epi8(15);
    let lo = _mm_and_si128(b, m);
    let hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
    _mm256_set_m128i(hi, lo)
}

/// 32 bits → 32 bytes, 0xFF where the bit is set.
#[inline(always)]
unsafe fn bits_to_bytes(x: u32) -> __m256i {
    let shuf = _mm256_set_epi64x(
        0x0303030303030303,
        0x0202020202020202,
        0x0101010101010101,
        0,
    );
    let bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(x as i32), shuf);
    let mask = _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe_u64 as i64);
    _mm256_cmpeq_epi8(_mm256_or_si256(bytes, mask), _mm256_set1_epi64x(-1))
}

#[inline(always)]
unsafe fn load_q8(y: &BlockQ8) -> __m256i {
    _mm256_loadu_si256(y.qs.as_ptr() as *const __m256i)
}

/// `row · act` for a format with a kernel here.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `ty` must satisfy `has_kernel` and `act` be its partner.
#[target_feature(enable = "avx2,fma,f16c")]
pub unsafe fn dot(ty: GgmlType, row: &[u8], act: &ActRow) -> f32 {
    match (ty, act) {
        (GgmlType::Q8_0, ActRow::Q8(x)) => legacy(row, 34, x, |b| {
            _mm256_loadu_si256(b.as_ptr().add(2) as *const __m256i)
        }),
        (GgmlType::Q4_0, ActRow::Q8(x)) => legacy(row, 18, x, |b| {
            _mm256_sub_epi8(nibbles(b.as_ptr().add(2)), _mm256_set1_epi8(8))
        }),
        (GgmlType::Q5_0, ActRow::Q8(x)) => legacy(row, 22, x, |b| {
            let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
            // bit set: nibble; bit clear: nibble − 16 (0xF0 | n as i8).
            let hi = _mm256_andnot_si256(bits_to_bytes(qh), _mm256_set1_epi8(0xF0u8 as i8));
            _mm256_or_si256(nibbles(b.as_ptr().add(6)), hi)
        }),
        (GgmlType::IQ4_NL, ActRow::Q8(x)) => {
            let table =
                _mm256_broadcastsi128_si256(_mm_loadu_si128(IQ4_LEVELS.as_ptr() as *const __m128i));
            legacy(row, 18, x, |b| {
                _mm256_shuffle_epi8(table, nibbles(b.as_ptr().add(2)))
            })
        }
        (GgmlType::Q4_K, ActRow::Q8K(x)) => q4_k(row, x),
        (GgmlType::Q6_K, ActRow::Q8K(x)) => q6_k(row, x),
        _ => unreachable!("no AVX2 kernel for {ty} with this activation"),
    }
}

/// `dot` for four activation rows at once: each weight block is unpacked once and reused.
///
/// # Safety
/// As `dot`.
#[target_feature(enable = "avx2,fma,f16c")]
pub unsafe fn dot4(ty: GgmlType, row: &[u8], acts: [&ActRow; 4]) -> [f32; 4] {
    fn q8(a: &ActRow) -> &[BlockQ8] {
        match a {
            ActRow::Q8(x) => x.as_slice(),
            _ => &[],
        }
    }
    let x = [q8(acts[0]), q8(acts[1]), q8(acts[2]), q8(acts[3])];
    match ty {
        GgmlType::Q8_0 => legacy4(row, 34, x, |b| {
            _mm256_loadu_si256(b.as_ptr().add(2) as *const __m256i)
        }),
        GgmlType::Q4_0 => legacy4(row, 18, x, |b| {
            _mm256_sub_epi8(nibbles(b.as_ptr().add(2)), _mm256_set1_epi8(8))
        }),
        GgmlType::Q5_0 => legacy4(row, 22, x, |b| {
            let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
            let hi = _mm256_andnot_si256(bits_to_bytes(qh), _mm256_set1_epi8(0xF0u8 as i8));
            _mm256_or_si256(nibbles(b.as_ptr().add(6)), hi)
        }),
        GgmlType::IQ4_NL => {
            let table =
                _mm256_broadcastsi128_si256(_mm_loadu_si128(IQ4_LEVELS.as_ptr() as *const __m128i));
            legacy4(row, 18, x, |b| {
                _mm256_shuffle_epi8(table, nibbles(b.as_ptr().add(2)))
            })
        }
        GgmlType::Q4_K | GgmlType::Q6_K => {
            fn q8k(a: &ActRow) -> &[BlockQ8K] {
                match a {
                    ActRow::Q8K(x) => x.as_slice(),
                    _ => &[],
                }
            }
            let x = [q8k(acts[0]), q8k(acts[1]), q8k(acts[2]), q8k(acts[3])];
            if ty == GgmlType::Q4_K {
                q4_k4(row, x)
            } else {
                q6_k4(row, x)
            }
        }
        _ => [
            dot(ty, row, acts[0]),
            dot(ty, row, acts[1]),
            dot(ty, row, acts[2]),
            dot(ty, row, acts[3]),
        ],
    }
}

#[inline(always)]
unsafe fn legacy4(
    row: &[u8],
    size: usize,
    x: [&[BlockQ8]; 4],
    unpack: impl Fn(&[u8]) -> __m256i,
) -> [f32; 4] {
    let mut acc = [_mm256_setzero_ps(); 4];
    for (i, b) in row.chunks_exact(size).enumerate() {
        let q = unpack(b);
        let aq = _mm256_sign_epi8(q, q);
        let dw = f16_at(b, 0);
        for t in 0..4 {
            let y = &x[t][i];
            let sy = _mm256_sign_epi8(load_q8(y), q);
            let s = _mm256_cvtepi32_ps(_mm256_madd_epi16(
                _mm256_maddubs_epi16(aq, sy),
                _mm256_set1_epi16(1),
            ));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * y.d), s, acc[t]);
        }
    }
    [hsum(acc[0]), hsum(acc[1]), hsum(acc[2]), hsum(acc[3])]
}

/// Blocks of 32 with one f16 scale at offset 0: `Σ d·dx·Σ q·qx`.
#[inline(always)]
unsafe fn legacy(row: &[u8], size: usize, x: &[BlockQ8], unpack: impl Fn(&[u8]) -> __m256i) -> f32 {
    let mut acc = _mm256_setzero_ps();
    for (b, y) in row.chunks_exact(size).zip(x) {
        let q = unpack(b);
        let d = _mm256_set1_ps(f16_at(b, 0) * y.d);
        acc = _mm256_fmadd_ps(d, mul_sum_i8(q, load_q8(y)), acc);
    }
    hsum(acc)
}

#[inline(always)]
unsafe fn q4_k(row: &[u8], x: &[BlockQ8K]) -> f32 {
    let mut sumf = 0.0f32;
    let m4 = _mm256_set1_epi8(15);
    for (b, y) in row.chunks_exact(144).zip(x) {
        let (sc, mn) = zinc_quant::scale_min_k4_all(&b[4..16]);
        let mut mins = 0i32;
        for j in 0..8 {
            mins += mn[j] as i32 * (y.bsums[2 * j] as i32 + y.bsums[2 * j + 1] as i32);
        }
        let qs = b.as_ptr().add(16);
        let mut sumi = _mm256_setzero_si256();
        for c in 0..4 {
            let bytes = _mm256_loadu_si256(qs.add(32 * c) as *const __m256i);
            let lo = _mm256_and_si256(bytes, m4);
            let hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
            let ylo = _mm256_loadu_si256(y.qs.as_ptr().add(64 * c) as *const __m256i);
            let yhi = _mm256_loadu_si256(y.qs.as_ptr().add(64 * c + 32) as *const __m256i);
            let plo = _mm256_madd_epi16(
                _mm256_maddubs_epi16(lo, ylo),
                _mm256_set1_epi16(sc[2 * c] as i16),
            );
            let phi = _mm256_madd_epi16(
                _mm256_maddubs_epi16(hi, yhi),
                _mm256_set1_epi16(sc[2 * c + 1] as i16),
            );
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(plo, phi));
        }
        sumf += f16_at(b, 0) * y.d * hsum_i32(sumi) as f32 - f16_at(b, 2) * y.d * mins as f32;
    }
    sumf
}

#[inline(always)]
unsafe fn q6_k(row: &[u8], x: &[BlockQ8K]) -> f32 {
    let mut sumf = 0.0f32;
    for (b, y) in row.chunks_exact(210).zip(x) {
        let sc: [i8; 16] = std::array::from_fn(|g| b[192 + g] as i8);
        // Σ (q − 32)·y = Σ q·y − 32·Σ y; Σ y per group is bsums.
        let mut offset = 0i32;
        for g in 0..16 {
            offset += sc[g] as i32 * y.bsums[g] as i32;
        }
        let mut sumi = _mm256_setzero_si256();
        for h in 0..2 {
            let parts = q6_k_half(b, h);
            for (k, q) in parts.into_iter().enumerate() {
                let e0 = 128 * h + 32 * k;
                let yv = _mm256_loadu_si256(y.qs.as_ptr().add(e0) as *const __m256i);
                let p16 = _mm256_maddubs_epi16(q, yv);
                let g = e0 / 16;
                let scales = _mm256_set_m128i(
                    _mm_set1_epi16(sc[g + 1] as i16),
                    _mm_set1_epi16(sc[g] as i16),
                );
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p16, scales));
            }
        }
        sumf += f16_at(b, 208) * y.d * (hsum_i32(sumi) - 32 * offset) as f32;
    }
    sumf
}

/// Q4_K for four activation rows: each 64-element chunk is unpacked once.
#[inline(always)]
unsafe fn q4_k4(row: &[u8], x: [&[BlockQ8K]; 4]) -> [f32; 4] {
    let mut sumf = [0.0f32; 4];
    let m4 = _mm256_set1_epi8(15);
    for (i, b) in row.chunks_exact(144).enumerate() {
        let (sc8, mn8) = zinc_quant::scale_min_k4_all(&b[4..16]);
        let sc: [i16; 8] = std::array::from_fn(|j| sc8[j] as i16);
        let mn: [i32; 8] = std::array::from_fn(|j| mn8[j] as i32);
        let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
        let qs = b.as_ptr().add(16);
        let mut sumi = [_mm256_setzero_si256(); 4];
        for c in 0..4 {
            let bytes = _mm256_loadu_si256(qs.add(32 * c) as *const __m256i);
            let lo = _mm256_and_si256(bytes, m4);
            let hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
            let (slo, shi) = (
                _mm256_set1_epi16(sc[2 * c]),
                _mm256_set1_epi16(sc[2 * c + 1]),
            );
            for t in 0..4 {
                let y = &x[t][i];
                let ylo = _mm256_loadu_si256(y.qs.as_ptr().add(64 * c) as *const __m256i);
                let yhi = _mm256_loadu_si256(y.qs.as_ptr().add(64 * c + 32) as *const __m256i);
                let plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, ylo), slo);
                let phi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, yhi), shi);
                sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(plo, phi));
            }
        }
        for t in 0..4 {
            let y = &x[t][i];
            let mut mins = 0i32;
            for j in 0..8 {
                mins += mn[j] * (y.bsums[2 * j] as i32 + y.bsums[2 * j + 1] as i32);
            }
            sumf[t] += d * y.d * hsum_i32(sumi[t]) as f32 - dmin * y.d * mins as f32;
        }
    }
    sumf
}

/// The 128 six-bit values of half `h` of a Q6_K block, unsigned (0..64), as four vectors of
/// 32: elements `128h + 32k ..` in vector `k`.
#[inline(always)]
unsafe fn q6_k_half(b: &[u8], h: usize) -> [__m256i; 4] {
    let m4 = _mm256_set1_epi8(15);
    let m2 = _mm256_set1_epi8(3);
    let ql = b.as_ptr().add(64 * h);
    let qh = _mm256_loadu_si256(b.as_ptr().add(128 + 32 * h) as *const __m256i);
    let l0 = _mm256_loadu_si256(ql as *const __m256i);
    let l1 = _mm256_loadu_si256(ql.add(32) as *const __m256i);
    let high = |shift: i32| match shift {
        0 => _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4),
        2 => _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4),
        4 => _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4),
        _ => _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4),
    };
    [
        _mm256_or_si256(_mm256_and_si256(l0, m4), high(0)),
        _mm256_or_si256(_mm256_and_si256(l1, m4), high(2)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), high(4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), high(6)),
    ]
}

/// Q6_K for four activation rows: each 128-element half is unpacked once.
#[inline(always)]
unsafe fn q6_k4(row: &[u8], x: [&[BlockQ8K]; 4]) -> [f32; 4] {
    let mut sumf = [0.0f32; 4];
    for (i, b) in row.chunks_exact(210).enumerate() {
        let sc: [i8; 16] = std::array::from_fn(|g| b[192 + g] as i8);
        let mut sumi = [_mm256_setzero_si256(); 4];
        for h in 0..2 {
            let parts = q6_k_half(b, h);
            for (k, q) in parts.into_iter().enumerate() {
                let e0 = 128 * h + 32 * k;
                let g = e0 / 16;
                let scales = _mm256_set_m128i(
                    _mm_set1_epi16(sc[g + 1] as i16),
                    _mm_set1_epi16(sc[g] as i16),
                );
                for t in 0..4 {
                    let yv = _mm256_loadu_si256(x[t][i].qs.as_ptr().add(e0) as *const __m256i);
                    sumi[t] = _mm256_add_epi32(
                        sumi[t],
                        _mm256_madd_epi16(_mm256_maddubs_epi16(q, yv), scales),
                    );
                }
            }
        }
        let d = f16_at(b, 208);
        for t in 0..4 {
            let y = &x[t][i];
            let mut offset = 0i32;
            for g in 0..16 {
                offset += sc[g] as i32 * y.bsums[g] as i32;
            }
            sumf[t] += d * y.d * (hsum_i32(sumi[t]) - 32 * offset) as f32;
        }
    }
    sumf
}

/// Eight Q8_K activation rows interleaved per super-block: super-block `b` of token `t` at
/// `qs[(8·b + t)·256 ..]`, its scale `d[b][t]` and group sums `bsums[b][t]`.
pub struct Q8KGroup {
    pub qs: Vec<i8>,
    pub d: Vec<[f32; 8]>,
    pub bsums: Vec<[[i16; 16]; 8]>,
}

/// Eight activation rows laid out for `dot8`.
pub enum Group {
    Q8(Q8Group),
    Q8K(Q8KGroup),
}

impl Group {
    /// Lays out eight rows (all of one kind).
    pub fn new(rows: [&ActRow; 8]) -> Option<Group> {
        match rows[0] {
            ActRow::Q8(_) => Some(Group::Q8(Q8Group::new(std::array::from_fn(
                |t| match rows[t] {
                    ActRow::Q8(v) => v.as_slice(),
                    _ => &[],
                },
            )))),
            ActRow::Q8K(first) => {
                let x: [&[BlockQ8K]; 8] = std::array::from_fn(|t| match rows[t] {
                    ActRow::Q8K(v) => v.as_slice(),
                    _ => &[],
                });
                let n = first.len();
                let mut qs = Vec::with_capacity(n * 8 * 256);
                let mut d = Vec::with_capacity(n);
                let mut bsums = Vec::with_capacity(n);
                for b in 0..n {
                    for r in &x {
                        qs.extend_from_slice(&r[b].qs);
                    }
                    d.push(std::array::from_fn(|t| x[t][b].d));
                    bsums.push(std::array::from_fn(|t| x[t][b].bsums));
                }
                Some(Group::Q8K(Q8KGroup { qs, d, bsums }))
            }
            _ => None,
        }
    }
}

/// `row · act[t]` for the eight rows of `g` (see `dot8_q8`, `q4_k8`, `q6_k8`).
///
/// # Safety
/// As `dot`; `g` must be the partner layout of `ty` with as many blocks as `row`.
#[target_feature(enable = "avx2,fma,f16c")]
pub unsafe fn dot8(ty: GgmlType, row: &[u8], g: &Group) -> [f32; 8] {
    match (ty, g) {
        (GgmlType::Q4_K, Group::Q8K(g)) => q4_k8(row, g),
        (GgmlType::Q6_K, Group::Q8K(g)) => q6_k8(row, g),
        (_, Group::Q8(g)) => dot8_q8(ty, row, g),
        _ => unreachable!("{ty} weights with the wrong activation layout"),
    }
}

/// Σ over lanes of `m[t]` for eight tokens, after `madd` of their 16 i16 group sums with `w`.
#[inline(always)]
unsafe fn weighted_bsums8(bsums: &[[i16; 16]; 8], w: __m256i) -> __m256i {
    let m: [__m256i; 8] = std::array::from_fn(|t| {
        _mm256_madd_epi16(_mm256_loadu_si256(bsums[t].as_ptr() as *const __m256i), w)
    });
    transpose_sum8(m)
}

#[inline(always)]
unsafe fn store8(v: __m256) -> [f32; 8] {
    let mut out = [0.0f32; 8];
    _mm256_storeu_ps(out.as_mut_ptr(), v);
    out
}

/// Q4_K for eight tokens: `Σ_sb dx·(d·Σ_j s_j·Σ q·y − dmin·Σ_j m_j·bsum_j)`.
#[inline(always)]
unsafe fn q4_k8(row: &[u8], g: &Q8KGroup) -> [f32; 8] {
    let m4 = _mm256_set1_epi8(15);
    let mut acc = _mm256_setzero_ps();
    for (i, b) in row.chunks_exact(144).enumerate() {
        let (sc, mn) = zinc_quant::scale_min_k4_all(&b[4..16]);
        let qs = b.as_ptr().add(16);
        let ys = g.qs.as_ptr().add(i * 8 * 256);
        let mut sumi = [_mm256_setzero_si256(); 8];
        for c in 0..4 {
            let bytes = _mm256_loadu_si256(qs.add(32 * c) as *const __m256i);
            let lo = _mm256_and_si256(bytes, m4);
            let hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
            let (slo, shi) = (
                _mm256_set1_epi16(sc[2 * c] as i16),
                _mm256_set1_epi16(sc[2 * c + 1] as i16),
            );
            for (t, s) in sumi.iter_mut().enumerate() {
                let y = ys.add(256 * t + 64 * c);
                let plo = _mm256_madd_epi16(
                    _mm256_maddubs_epi16(lo, _mm256_loadu_si256(y as *const __m256i)),
                    slo,
                );
                let phi = _mm256_madd_epi16(
                    _mm256_maddubs_epi16(hi, _mm256_loadu_si256(y.add(32) as *const __m256i)),
                    shi,
                );
                *s = _mm256_add_epi32(*s, _mm256_add_epi32(plo, phi));
            }
        }
        // m_j weights groups 2j and 2j+1 of 16.
        let w = _mm256_setr_epi16(
            mn[0] as i16,
            mn[0] as i16,
            mn[1] as i16,
            mn[1] as i16,
            mn[2] as i16,
            mn[2] as i16,
            mn[3] as i16,
            mn[3] as i16,
            mn[4] as i16,
            mn[4] as i16,
            mn[5] as i16,
            mn[5] as i16,
            mn[6] as i16,
            mn[6] as i16,
            mn[7] as i16,
            mn[7] as i16,
        );
        let mins = _mm256_cvtepi32_ps(weighted_bsums8(&g.bsums[i], w));
        let isum = _mm256_cvtepi32_ps(transpose_sum8(sumi));
        let dx = _mm256_loadu_ps(g.d[i].as_ptr());
        acc = _mm256_fmadd_ps(isum, _mm256_mul_ps(_mm256_set1_ps(f16_at(b, 0)), dx), acc);
        acc = _mm256_fnmadd_ps(mins, _mm256_mul_ps(_mm256_set1_ps(f16_at(b, 2)), dx), acc);
    }
    store8(acc)
}

/// Q6_K for eight tokens: `Σ_sb d·dx·(Σ_g s_g·Σ q·y − 32·Σ_g s_g·bsum_g)` with q unsigned.
#[inline(always)]
unsafe fn q6_k8(row: &[u8], g: &Q8KGroup) -> [f32; 8] {
    let mut acc = _mm256_setzero_ps();
    for (i, b) in row.chunks_exact(210).enumerate() {
        let sc: [i8; 16] = std::array::from_fn(|k| b[192 + k] as i8);
        let ys = g.qs.as_ptr().add(i * 8 * 256);
        let mut sumi = [_mm256_setzero_si256(); 8];
        for h in 0..2 {
            let parts = q6_k_half(b, h);
            for (k, q) in parts.into_iter().enumerate() {
                let e0 = 128 * h + 32 * k;
                let gi = e0 / 16;
                let scales = _mm256_set_m128i(
                    _mm_set1_epi16(sc[gi + 1] as i16),
                    _mm_set1_epi16(sc[gi] as i16),
                );
                for (t, s) in sumi.iter_mut().enumerate() {
                    let y = _mm256_loadu_si256(ys.add(256 * t + e0) as *const __m256i);
                    *s =
                        _mm256_add_epi32(*s, _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), scales));
                }
            }
        }
        let w = _mm256_loadu_si256(
            std::array::from_fn::<i16, 16, _>(|k| sc[k] as i16).as_ptr() as *const __m256i
        );
        let offset = weighted_bsums8(&g.bsums[i], w);
        let total = _mm256_sub_epi32(transpose_sum8(sumi), _mm256_slli_epi32(offset, 5));
        let dx = _mm256_loadu_ps(g.d[i].as_ptr());
        acc = _mm256_fmadd_ps(
            _mm256_cvtepi32_ps(total),
            _mm256_mul_ps(_mm256_set1_ps(f16_at(b, 208)), dx),
            acc,
        );
    }
    store8(acc)
}

/// Eight i32x8 partial-sum vectors → one vector of their eight totals (lane t = Σ p[t]).
#[inline(always)]
unsafe fn transpose_sum8(p: [__m256i; 8]) -> __m256i {
    let h01 = _mm256_hadd_epi32(p[0], p[1]);
    let h23 = _mm256_hadd_epi32(p[2], p[3]);
    let h45 = _mm256_hadd_epi32(p[4], p[5]);
    let h67 = _mm256_hadd_epi32(p[6], p[7]);
    let h0123 = _mm256_hadd_epi32(h01, h23);
    let h4567 = _mm256_hadd_epi32(h45, h67);
    _mm256_add_epi32(
        _mm256_permute2x128_si256(h0123, h4567, 0x20),
        _mm256_permute2x128_si256(h0123, h4567, 0x31),
    )
}

/// Eight Q8 activation rows interleaved per block: block `b` of token `t` at
/// `qs[(8·b + t)·32 ..]`, and `d[b][t]` its scale. Built once per matmul call.
pub struct Q8Group {
    pub qs: Vec<i8>,
    pub d: Vec<[f32; 8]>,
}

impl Q8Group {
    pub fn new(rows: [&[BlockQ8]; 8]) -> Q8Group {
        let n = rows[0].len();
        let mut qs = Vec::with_capacity(n * 256);
        let mut d = Vec::with_capacity(n);
        for b in 0..n {
            for r in &rows {
                qs.extend_from_slice(&r[b].qs);
            }
            d.push(std::array::from_fn(|t| rows[t][b].d));
        }
        Q8Group { qs, d }
    }
}

/// `row · act[t]` for the eight activation rows of `g`, a 32-element weight format. Each block is
/// unpacked once; the eight integer block sums are gathered into one vector and scaled by
/// `d_w · g.d[b]`.
///
#[inline(always)]
unsafe fn dot8_q8(ty: GgmlType, row: &[u8], g: &Q8Group) -> [f32; 8] {
    let table = _mm256_broadcastsi128_si256(_mm_loadu_si128(IQ4_LEVELS.as_ptr() as *const __m128i));
    let size = ty.type_size();
    let ones = _mm256_set1_epi16(1);
    let mut acc = _mm256_setzero_ps();
    for (i, b) in row.chunks_exact(size).enumerate() {
        let q = match ty {
            GgmlType::Q8_0 => _mm256_loadu_si256(b.as_ptr().add(2) as *const __m256i),
            GgmlType::Q4_0 => _mm256_sub_epi8(nibbles(b.as_ptr().add(2)), _mm256_set1_epi8(8)),
            GgmlType::Q5_0 => {
                let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
                let hi = _mm256_andnot_si256(bits_to_bytes(qh), _mm256_set1_epi8(0xF0u8 as i8));
                _mm256_or_si256(nibbles(b.as_ptr().add(6)), hi)
            }
            _ => _mm256_shuffle_epi8(table, nibbles(b.as_ptr().add(2))),
        };
        let aq = _mm256_sign_epi8(q, q);
        let ys = g.qs.as_ptr().add(i * 256);
        let p: [__m256i; 8] = std::array::from_fn(|t| {
            let y = _mm256_loadu_si256(ys.add(32 * t) as *const __m256i);
            _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(y, q)), ones)
        });
        let sums = _mm256_cvtepi32_ps(transpose_sum8(p));
        let scale = _mm256_mul_ps(
            _mm256_set1_ps(f16_at(b, 0)),
            _mm256_loadu_ps(g.d[i].as_ptr()),
        );
        acc = _mm256_fmadd_ps(sums, scale, acc);
    }
    let mut out = [0.0f32; 8];
    _mm256_storeu_ps(out.as_mut_ptr(), acc);
    out
}
