//! K-quants: 256-element super-blocks (`ARCHITECTURES.md §11`).
//!
//! Shared indexing for Q2_K, Q3_K and Q6_K: element `e` lies in half `H = e / 128`, quarter
//! `J = (e % 128) / 32` and lane `l = e % 32`; the low bits live in `qs[32H + l] >> 2J`.
//! Q4_K and Q5_K use 64-element chunks `c = e / 64` whose first 32 elements take the low nibble
//! of `qs[32c + r]` and the next 32 the high nibble.

use crate::{f16_at, put_f16};

const QK: usize = 256;

// ---------------------------------------------------------------------------------------------
// Dequantization
// ---------------------------------------------------------------------------------------------

/// Q2_K (84 B): `scales[16]` (low nibble scale, high nibble min), `qs[64]`, `d`, `dmin`.
pub fn dequantize_q2_k(b: &[u8], y: &mut [f32]) {
    let scales = &b[0..16];
    let qs = &b[16..80];
    let d = f16_at(b, 80);
    let dmin = f16_at(b, 82);
    for (e, v) in y.iter_mut().enumerate() {
        let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
        let q = (qs[32 * h + l] >> (2 * j)) & 3;
        let sc = scales[e / 16];
        let dl = d * (sc & 15) as f32;
        let ml = dmin * (sc >> 4) as f32;
        *v = dl * q as f32 - ml;
    }
}

/// The sixteen 6-bit Q3_K scales, still offset by +32.
fn q3_k_scales(b: &[u8]) -> [u8; 16] {
    let mut s = [0u8; 16];
    for (j, sj) in s.iter_mut().enumerate() {
        let lo = if j < 8 { b[j] & 15 } else { b[j - 8] >> 4 };
        let hi = (b[8 + j % 4] >> (2 * (j / 4))) & 3;
        *sj = lo | (hi << 4);
    }
    s
}

/// Q3_K (110 B): `hmask[32]`, `qs[64]`, `scales[12]` (6-bit, signed by −32), `d`.
pub fn dequantize_q3_k(b: &[u8], y: &mut [f32]) {
    let hmask = &b[0..32];
    let qs = &b[32..96];
    let scales = q3_k_scales(&b[96..108]);
    let d = f16_at(b, 108);
    for (e, v) in y.iter_mut().enumerate() {
        let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
        let q2 = ((qs[32 * h + l] >> (2 * j)) & 3) as i32;
        let high = (hmask[l] >> (e / 32)) & 1;
        let q = q2 - if high == 1 { 0 } else { 4 };
        let dl = d * (scales[e / 16] as i32 - 32) as f32;
        *v = dl * q as f32;
    }
}

/// The eight (scale, min) pairs of Q4_K / Q5_K, 6 bits each, packed in 12 bytes.
#[inline]
fn scale_min_k4(b: &[u8], j: usize) -> (u8, u8) {
    if j < 4 {
        (b[j] & 63, b[j + 4] & 63)
    } else {
        (
            (b[j + 4] & 15) | ((b[j - 4] >> 6) << 4),
            (b[j + 4] >> 4) | ((b[j] >> 6) << 4),
        )
    }
}

/// All eight (scale, min) pairs of a Q4_K / Q5_K block's 12 packed bytes.
#[inline]
pub fn scale_min_k4_all(b: &[u8]) -> ([u8; 8], [u8; 8]) {
    let mut sc = [0u8; 8];
    let mut m = [0u8; 8];
    for j in 0..8 {
        (sc[j], m[j]) = scale_min_k4(b, j);
    }
    (sc, m)
}

/// Q4_K (144 B): `d`, `dmin`, `scales[12]`, `qs[128]`; `y = d·s·q − dmin·m`.
pub fn dequantize_q4_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let dmin = f16_at(b, 2);
    let scales = &b[4..16];
    let qs = &b[16..144];
    for (sub, ys) in y.chunks_exact_mut(32).enumerate() {
        let (s, m) = scale_min_k4(scales, sub);
        let d1 = d * s as f32;
        let m1 = dmin * m as f32;
        let base = 32 * (sub / 2);
        let shift = 4 * (sub % 2);
        for (l, v) in ys.iter_mut().enumerate() {
            let q = (qs[base + l] >> shift) & 15;
            *v = d1 * q as f32 - m1;
        }
    }
}

/// Q5_K (176 B): `d`, `dmin`, `scales[12]`, `qh[32]`, `qs[128]`; the 5th bit of element `e` is
/// bit `e / 32` of `qh[e % 32]`.
pub fn dequantize_q5_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let dmin = f16_at(b, 2);
    let scales = &b[4..16];
    let qh = &b[16..48];
    let qs = &b[48..176];
    for (sub, ys) in y.chunks_exact_mut(32).enumerate() {
        let (s, m) = scale_min_k4(scales, sub);
        let d1 = d * s as f32;
        let m1 = dmin * m as f32;
        let base = 32 * (sub / 2);
        let shift = 4 * (sub % 2);
        for (l, v) in ys.iter_mut().enumerate() {
            let q = ((qs[base + l] >> shift) & 15) | (((qh[l] >> sub) & 1) << 4);
            *v = d1 * q as f32 - m1;
        }
    }
}

/// Q6_K (210 B): `ql[128]`, `qh[64]`, `scales[16]: i8`, `d`; `y = d·scale·(q − 32)`.
pub fn dequantize_q6_k(b: &[u8], y: &mut [f32]) {
    let ql = &b[0..128];
    let qh = &b[128..192];
    let scales = &b[192..208];
    let d = f16_at(b, 208);
    for (e, v) in y.iter_mut().enumerate() {
        let (h, k, l) = (e / 128, (e % 128) / 32, e % 32);
        let byte = ql[64 * h + l + 32 * (k & 1)];
        let lo = if k < 2 { byte & 15 } else { byte >> 4 };
        let hi = (qh[32 * h + l] >> (2 * k)) & 3;
        let q = (lo | (hi << 4)) as i32 - 32;
        let dl = d * (scales[e / 16] as i8) as f32;
        *v = dl * q as f32;
    }
}

/// Q8_K (292 B): `d: f32`, `qs[256]: i8`, `bsums[16]: i16` (sum of each group of 16 `qs`).
pub fn dequantize_q8_k(b: &[u8], y: &mut [f32]) {
    let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    for (v, &q) in y.iter_mut().zip(&b[4..4 + QK]) {
        *v = d * (q as i8) as f32;
    }
}

// ---------------------------------------------------------------------------------------------
// Quantization (reference quality)
// ---------------------------------------------------------------------------------------------

/// Fits `x ≈ scale·q − min` with `q ∈ 0..=nmax` and `min ≥ 0` by alternating rounding and
/// least squares. Returns `(scale, min)`, both ≥ 0.
fn fit_affine(x: &[f32], nmax: u8) -> (f32, f32) {
    let lo = x.iter().fold(0.0f32, |m, &v| m.min(v));
    let hi = x.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    if hi <= lo {
        return (0.0, -lo);
    }
    let nmax = nmax as f32;
    let mut scale = (hi - lo) / nmax;
    let mut offset = lo; // x ≈ scale·q + offset, offset ≤ 0
    for _ in 0..4 {
        let (mut sq, mut sqq, mut sx, mut sqx) = (0f64, 0f64, 0f64, 0f64);
        let n = x.len() as f64;
        for &v in x {
            let q = ((v - offset) / scale).round().clamp(0.0, nmax) as f64;
            sq += q;
            sqq += q * q;
            sx += v as f64;
            sqx += q * v as f64;
        }
        let det = n * sqq - sq * sq;
        if det <= 0.0 {
            break;
        }
        let s = (n * sqx - sq * sx) / det;
        let o = (sx - s * sq) / n;
        let (s, o) = if o > 0.0 {
            // The format cannot hold a positive offset: refit the scale alone with offset 0.
            (if sqq > 0.0 { sqx / sqq } else { 0.0 }, 0.0)
        } else {
            (s, o)
        };
        if s.is_nan() || s <= 0.0 || !s.is_finite() {
            break;
        }
        scale = s as f32;
        offset = o as f32;
    }
    (scale, -offset)
}

/// Fits `x ≈ scale·q` with `q ∈ −nmin..=nmax` by least squares from the abs-max start.
fn fit_symmetric(x: &[f32], nmin: i32, nmax: i32) -> f32 {
    let mut amax = 0.0f32;
    for &v in x {
        if v.abs() > amax.abs() {
            amax = v;
        }
    }
    if amax == 0.0 {
        return 0.0;
    }
    // The extreme value maps to −nmin (the wider side).
    let mut scale = amax / -(nmin as f32);
    let mut best = (sq_err_sym(x, scale, nmin, nmax), scale);
    for _ in 0..4 {
        let (mut sqq, mut sqx) = (0f64, 0f64);
        for &v in x {
            let q = (v / scale).round().clamp(-nmin as f32, nmax as f32) as f64;
            sqq += q * q;
            sqx += q * v as f64;
        }
        if sqq == 0.0 {
            break;
        }
        scale = (sqx / sqq) as f32;
        let err = sq_err_sym(x, scale, nmin, nmax);
        if err < best.0 {
            best = (err, scale);
        }
    }
    best.1
}

fn sq_err_sym(x: &[f32], scale: f32, nmin: i32, nmax: i32) -> f32 {
    if scale == 0.0 {
        return x.iter().map(|v| v * v).sum();
    }
    x.iter()
        .map(|&v| {
            let q = (v / scale).round().clamp(-nmin as f32, nmax as f32);
            let e = v - scale * q;
            e * e
        })
        .sum()
}

/// Quantizes non-negative per-sub-block values to `bits`-bit integers under one f16 super-scale.
/// Returns the stored super-scale and the integers.
fn quantize_scales<const N: usize>(
    vals: &[f32; N],
    bits: u32,
    b: &mut [u8],
    at: usize,
) -> (f32, [u8; N]) {
    let top = ((1u32 << bits) - 1) as f32;
    let max = vals.iter().fold(0.0f32, |m, &v| m.max(v));
    let d = put_f16(b, at, max / top);
    let mut out = [0u8; N];
    if d > 0.0 {
        for (o, &v) in out.iter_mut().zip(vals) {
            *o = (v / d).round().clamp(0.0, top) as u8;
        }
    }
    (d, out)
}

/// Quantizes one value with a stored affine scale; `0..=nmax`.
#[inline]
fn q_affine(v: f32, scale: f32, min: f32, nmax: u8) -> u8 {
    if scale == 0.0 {
        return 0;
    }
    ((v + min) / scale).round().clamp(0.0, nmax as f32) as u8
}

#[inline]
fn q_sym(v: f32, scale: f32, nmin: i32, nmax: i32) -> i32 {
    if scale == 0.0 {
        return 0;
    }
    ((v / scale).round() as i32).clamp(-nmin, nmax)
}

pub fn quantize_q2_k(x: &[f32], b: &mut [u8]) {
    let mut scales = [0f32; 16];
    let mut mins = [0f32; 16];
    for (s, xs) in x.chunks_exact(16).enumerate() {
        (scales[s], mins[s]) = fit_affine(xs, 3);
    }
    let (d, sc) = quantize_scales(&scales, 4, b, 80);
    let (dmin, mn) = quantize_scales(&mins, 4, b, 82);
    b[0..80].fill(0);
    for s in 0..16 {
        b[s] = sc[s] | (mn[s] << 4);
    }
    for (e, &v) in x.iter().enumerate() {
        let s = e / 16;
        let q = q_affine(v, d * sc[s] as f32, dmin * mn[s] as f32, 3);
        let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
        b[16 + 32 * h + l] |= q << (2 * j);
    }
}

pub fn quantize_q3_k(x: &[f32], b: &mut [u8]) {
    let mut scales = [0f32; 16];
    for (s, xs) in x.chunks_exact(16).enumerate() {
        scales[s] = fit_symmetric(xs, 4, 3);
    }
    // Signed 6-bit scales (−32..=31) under one f16 super-scale.
    let d = fit_symmetric(&scales, 32, 31);
    let d = put_f16(b, 108, d);
    let mut sc = [0i32; 16];
    for (o, &v) in sc.iter_mut().zip(&scales) {
        *o = q_sym(v, d, 32, 31);
    }
    b[0..108].fill(0);
    for (j, &s) in sc.iter().enumerate() {
        let u = (s + 32) as u8;
        if j < 8 {
            b[96 + j] |= u & 15;
        } else {
            b[96 + j - 8] |= (u & 15) << 4;
        }
        b[96 + 8 + j % 4] |= (u >> 4) << (2 * (j / 4));
    }
    for (e, &v) in x.iter().enumerate() {
        let q = q_sym(v, d * sc[e / 16] as f32, 4, 3) + 4; // 0..=7
        let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
        b[32 + 32 * h + l] |= ((q & 3) as u8) << (2 * j);
        b[l] |= ((q >> 2) as u8) << (e / 32);
    }
}

/// Packs eight 6-bit (scale, min) pairs the way `scale_min_k4` reads them.
fn pack_scale_min_k4(sc: &[u8; 8], mn: &[u8; 8], out: &mut [u8]) {
    for j in 0..4 {
        out[j] = sc[j] | ((sc[j + 4] >> 4) << 6);
        out[j + 4] = mn[j] | ((mn[j + 4] >> 4) << 6);
        out[j + 8] = (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4);
    }
}

/// Shared by Q4_K and Q5_K: fits the eight sub-blocks, stores `d`, `dmin` and the packed scales,
/// and returns each element's quantized value (`0..=nmax`).
fn quantize_k4_common(x: &[f32], b: &mut [u8], nmax: u8) -> [u8; QK] {
    let mut scales = [0f32; 8];
    let mut mins = [0f32; 8];
    for (s, xs) in x.chunks_exact(32).enumerate() {
        (scales[s], mins[s]) = fit_affine(xs, nmax);
    }
    let (d, sc) = quantize_scales(&scales, 6, b, 0);
    let (dmin, mn) = quantize_scales(&mins, 6, b, 2);
    pack_scale_min_k4(&sc, &mn, &mut b[4..16]);
    let mut q = [0u8; QK];
    for (e, &v) in x.iter().enumerate() {
        let s = e / 32;
        q[e] = q_affine(v, d * sc[s] as f32, dmin * mn[s] as f32, nmax);
    }
    q
}

pub fn quantize_q4_k(x: &[f32], b: &mut [u8]) {
    let q = quantize_k4_common(x, b, 15);
    let qs = &mut b[16..144];
    for c in 0..4 {
        for l in 0..32 {
            qs[32 * c + l] = q[64 * c + l] | (q[64 * c + 32 + l] << 4);
        }
    }
}

pub fn quantize_q5_k(x: &[f32], b: &mut [u8]) {
    let q = quantize_k4_common(x, b, 31);
    b[16..176].fill(0);
    for (e, &v) in q.iter().enumerate() {
        let (c, r) = (e / 64, e % 64);
        let nib = v & 15;
        if r < 32 {
            b[48 + 32 * c + r] |= nib;
        } else {
            b[48 + 32 * c + r - 32] |= nib << 4;
        }
        b[16 + e % 32] |= (v >> 4) << (e / 32);
    }
}

pub fn quantize_q6_k(x: &[f32], b: &mut [u8]) {
    let mut scales = [0f32; 16];
    for (s, xs) in x.chunks_exact(16).enumerate() {
        scales[s] = fit_symmetric(xs, 32, 31);
    }
    // Signed 8-bit scales under one f16 super-scale.
    let d = fit_symmetric(&scales, 128, 127);
    let d = put_f16(b, 208, d);
    b[0..208].fill(0);
    let mut sc = [0i32; 16];
    for (s, (o, &v)) in sc.iter_mut().zip(&scales).enumerate() {
        *o = q_sym(v, d, 128, 127);
        b[192 + s] = (*o as i8) as u8;
    }
    for (e, &v) in x.iter().enumerate() {
        let q = (q_sym(v, d * sc[e / 16] as f32, 32, 31) + 32) as u8; // 0..=63
        let (h, k, l) = (e / 128, (e % 128) / 32, e % 32);
        let at = 64 * h + l + 32 * (k & 1);
        b[at] |= if k < 2 { q & 15 } else { (q & 15) << 4 };
        b[128 + 32 * h + l] |= (q >> 4) << (2 * k);
    }
}

/// Q8_K as ggml's reference: the largest-magnitude element maps to −127 (clamped to 127).
pub fn quantize_q8_k(x: &[f32], b: &mut [u8]) {
    let mut max = 0.0f32;
    for &v in x {
        if v.abs() > max.abs() {
            max = v;
        }
    }
    b.fill(0);
    if max == 0.0 {
        return;
    }
    let iscale = -127.0 / max;
    let mut qs = [0i8; QK];
    for (q, &v) in qs.iter_mut().zip(x) {
        *q = ((iscale * v).round() as i32).min(127) as i8;
    }
    b[0..4].copy_from_slice(&(1.0 / iscale).to_le_bytes());
    for (dst, q) in b[4..4 + QK].iter_mut().zip(&qs) {
        *dst = *q as u8;
    }
    for (g, group) in qs.chunks_exact(16).enumerate() {
        let sum: i16 = group.iter().map(|&q| q as i16).sum();
        let at = 4 + QK + 2 * g;
        b[at..at + 2].copy_from_slice(&sum.to_le_bytes());
    }
}
