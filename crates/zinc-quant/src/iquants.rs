//! Non-linear 4-bit formats: IQ4_NL (32 elements) and IQ4_XS (256 elements)
//! (`ARCHITECTURES.md §11`). Each 4-bit code indexes a fixed table of levels.

use crate::{f16_at, put_f16};

/// The sixteen IQ4 levels.
pub const IQ4_LEVELS: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];

/// IQ4_NL (18 B): `d: f16`, `qs[16]`; `y[j] = d·K[lo(qs[j])]`, `y[j+16] = d·K[hi(qs[j])]`.
pub fn dequantize_iq4_nl(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    decode_nibbles(d, &b[2..18], y);
}

fn decode_nibbles(d: f32, qs: &[u8], y: &mut [f32]) {
    for j in 0..16 {
        y[j] = d * IQ4_LEVELS[(qs[j] & 15) as usize] as f32;
        y[j + 16] = d * IQ4_LEVELS[(qs[j] >> 4) as usize] as f32;
    }
}

/// IQ4_XS (136 B): `d: f16`, `scales_h: u16`, `scales_l[4]`, `qs[128]`; sub-block `ib` has the
/// 6-bit scale `ls` and `dl = d·(ls − 32)`.
pub fn dequantize_iq4_xs(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let scales_h = u16::from_le_bytes([b[2], b[3]]);
    let scales_l = &b[4..8];
    let qs = &b[8..136];
    for (ib, ys) in y.chunks_exact_mut(32).enumerate() {
        let ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 15)
            | ((((scales_h >> (2 * ib)) & 3) as u8) << 4);
        let dl = d * (ls as i32 - 32) as f32;
        decode_nibbles(dl, &qs[16 * ib..16 * ib + 16], ys);
    }
}

/// Index of the level nearest to `v` (the first on ties).
fn nearest_level(v: f32) -> u8 {
    let mut best = 0usize;
    let mut best_err = f32::INFINITY;
    for (i, &k) in IQ4_LEVELS.iter().enumerate() {
        let e = (v - k as f32).abs();
        if e < best_err {
            best = i;
            best_err = e;
        }
    }
    best as u8
}

/// Chooses a block scale by trying a few candidates around `absmax/127` and keeping the one of
/// least squared error; returns the scale.
fn search_scale(x: &[f32]) -> f32 {
    let mut amax = 0.0f32;
    for &v in x {
        if v.abs() > amax.abs() {
            amax = v;
        }
    }
    if amax == 0.0 {
        return 0.0;
    }
    let mut best = (f32::INFINITY, 0.0f32);
    for step in -8..=8 {
        let d = amax / (-127.0 + step as f32 * 2.0);
        let err: f32 = x
            .iter()
            .map(|&v| {
                let e = v - d * IQ4_LEVELS[nearest_level(v / d) as usize] as f32;
                e * e
            })
            .sum();
        if err < best.0 {
            best = (err, d);
        }
    }
    best.1
}

fn encode_nibbles(d: f32, x: &[f32], qs: &mut [u8]) {
    let id = if d == 0.0 { 0.0 } else { 1.0 / d };
    for j in 0..16 {
        qs[j] = nearest_level(x[j] * id) | (nearest_level(x[j + 16] * id) << 4);
    }
}

pub fn quantize_iq4_nl(x: &[f32], b: &mut [u8]) {
    let d = put_f16(b, 0, search_scale(x));
    encode_nibbles(d, x, &mut b[2..18]);
}

pub fn quantize_iq4_xs(x: &[f32], b: &mut [u8]) {
    let mut scales = [0f32; 8];
    for (s, xs) in x.chunks_exact(32).enumerate() {
        scales[s] = search_scale(xs);
    }
    let mut amax = 0.0f32;
    for &v in &scales {
        if v.abs() > amax.abs() {
            amax = v;
        }
    }
    let d = put_f16(b, 0, amax / -32.0);
    let mut scales_h = 0u16;
    b[4..8].fill(0);
    for (ib, xs) in x.chunks_exact(32).enumerate() {
        let l = if d == 0.0 {
            0
        } else {
            ((scales[ib] / d).round() as i32).clamp(-32, 31)
        };
        let ls = (l + 32) as u16;
        b[4 + ib / 2] |= ((ls & 15) as u8) << (4 * (ib % 2));
        scales_h |= (ls >> 4) << (2 * ib);
        let dl = d * l as f32;
        encode_nibbles(dl, xs, &mut b[8 + 16 * ib..8 + 16 * ib + 16]);
    }
    b[2..4].copy_from_slice(&scales_h.to_le_bytes());
}
