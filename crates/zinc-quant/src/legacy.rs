//! The 32-element formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (`ARCHITECTURES.md §11`).
//!
//! Nibble order: the low nibble of byte j is element j, the high nibble element j + 16.

use crate::{f16_at, put_f16, round_away};

/// Q4_0 (18 B): `d: f16`, `qs[16]`; `y = (q − 8)·d`.
pub fn dequantize_q4_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..18];
    for j in 0..16 {
        y[j] = d * ((qs[j] & 15) as i32 - 8) as f32;
        y[j + 16] = d * ((qs[j] >> 4) as i32 - 8) as f32;
    }
}

/// Q4_1 (20 B): `d: f16`, `m: f16`, `qs[16]`; `y = q·d + m`.
pub fn dequantize_q4_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let m = f16_at(b, 2);
    let qs = &b[4..20];
    for j in 0..16 {
        y[j] = d * (qs[j] & 15) as f32 + m;
        y[j + 16] = d * (qs[j] >> 4) as f32 + m;
    }
}

/// The five-bit value of element `e` from `qh` (bit e) and the nibbles in `qs`.
#[inline]
fn q5(qh: u32, qs: &[u8], e: usize) -> u8 {
    let lo = if e < 16 { qs[e] & 15 } else { qs[e - 16] >> 4 };
    lo | ((((qh >> e) & 1) as u8) << 4)
}

/// Q5_0 (22 B): `d: f16`, `qh: u32`, `qs[16]`; `y = (q − 16)·d`.
pub fn dequantize_q5_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    let qs = &b[6..22];
    for (e, v) in y.iter_mut().enumerate() {
        *v = d * (q5(qh, qs, e) as i32 - 16) as f32;
    }
}

/// Q5_1 (24 B): `d: f16`, `m: f16`, `qh: u32`, `qs[16]`; `y = q·d + m`.
pub fn dequantize_q5_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let m = f16_at(b, 2);
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let qs = &b[8..24];
    for (e, v) in y.iter_mut().enumerate() {
        *v = d * q5(qh, qs, e) as f32 + m;
    }
}

/// Q8_0 (34 B): `d: f16`, `qs[32]: i8`; `y = q·d`.
pub fn dequantize_q8_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    for (v, &q) in y.iter_mut().zip(&b[2..34]) {
        *v = (q as i8) as f32 * d;
    }
}

/// The element of largest magnitude, sign kept (the first one on ties).
fn signed_absmax(x: &[f32]) -> f32 {
    let mut best = 0.0f32;
    for &v in x {
        if v.abs() > best.abs() {
            best = v;
        }
    }
    best
}

fn inverse(d: f32) -> f32 {
    if d == 0.0 {
        0.0
    } else {
        1.0 / d
    }
}

fn pack_nibbles(q: &[u8; 32], qs: &mut [u8]) {
    for j in 0..16 {
        qs[j] = (q[j] & 15) | ((q[j + 16] & 15) << 4);
    }
}

fn pack_high_bits(q: &[u8; 32]) -> [u8; 4] {
    let mut qh = 0u32;
    for (e, &v) in q.iter().enumerate() {
        qh |= (((v >> 4) & 1) as u32) << e;
    }
    qh.to_le_bytes()
}

/// Symmetric: the largest-magnitude element maps to −8 exactly.
pub fn quantize_q4_0(x: &[f32], b: &mut [u8]) {
    let d = signed_absmax(x) / -8.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (qi, &v) in q.iter_mut().zip(x) {
        *qi = ((v * id + 8.5) as i32).clamp(0, 15) as u8;
    }
    put_f16(b, 0, d);
    pack_nibbles(&q, &mut b[2..18]);
}

/// Affine: min maps to 0 and max to 15.
pub fn quantize_q4_1(x: &[f32], b: &mut [u8]) {
    let (min, max) = min_max(x);
    let d = (max - min) / 15.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (qi, &v) in q.iter_mut().zip(x) {
        *qi = (((v - min) * id + 0.5) as i32).clamp(0, 15) as u8;
    }
    put_f16(b, 0, d);
    put_f16(b, 2, min);
    pack_nibbles(&q, &mut b[4..20]);
}

pub fn quantize_q5_0(x: &[f32], b: &mut [u8]) {
    let d = signed_absmax(x) / -16.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (qi, &v) in q.iter_mut().zip(x) {
        *qi = ((v * id + 16.5) as i32).clamp(0, 31) as u8;
    }
    put_f16(b, 0, d);
    b[2..6].copy_from_slice(&pack_high_bits(&q));
    pack_nibbles(&q, &mut b[6..22]);
}

pub fn quantize_q5_1(x: &[f32], b: &mut [u8]) {
    let (min, max) = min_max(x);
    let d = (max - min) / 31.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (qi, &v) in q.iter_mut().zip(x) {
        *qi = (((v - min) * id + 0.5) as i32).clamp(0, 31) as u8;
    }
    put_f16(b, 0, d);
    put_f16(b, 2, min);
    b[4..8].copy_from_slice(&pack_high_bits(&q));
    pack_nibbles(&q, &mut b[8..24]);
}

pub fn quantize_q8_0(x: &[f32], b: &mut [u8]) {
    let amax = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = inverse(d);
    put_f16(b, 0, d);
    for (q, &v) in b[2..34].iter_mut().zip(x) {
        *q = (round_away(v * id).clamp(-127.0, 127.0) as i8) as u8;
    }
}

fn min_max(x: &[f32]) -> (f32, f32) {
    x.iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}
