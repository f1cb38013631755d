//! MXFP4 (32 elements, 17 B): an E8M0 shared exponent and sixteen bytes of E2M1 codes
//! (`ARCHITECTURES.md §11`, OCP Microscaling spec v1.0).

/// E2M1 values doubled; bit 3 is the sign.
pub const MXFP4_LEVELS: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// `2^(e − 127) / 2` as ggml computes it (`ggml_e8m0_to_fp32_half`): `e < 2` lands in the
/// denormals.
#[inline]
pub fn e8m0_to_f32_half(e: u8) -> f32 {
    let bits = if e < 2 {
        0x0020_0000u32 << e
    } else {
        ((e as u32) - 1) << 23
    };
    f32::from_bits(bits)
}

pub fn dequantize_mxfp4(b: &[u8], y: &mut [f32]) {
    let d = e8m0_to_f32_half(b[0]);
    let qs = &b[1..17];
    for j in 0..16 {
        y[j] = d * MXFP4_LEVELS[(qs[j] & 15) as usize] as f32;
        y[j + 16] = d * MXFP4_LEVELS[(qs[j] >> 4) as usize] as f32;
    }
}

/// The shared exponent makes the largest magnitude land in the top levels; each element takes
/// its nearest level (the first on ties).
pub fn quantize_mxfp4(x: &[f32], b: &mut [u8]) {
    let amax = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let e = if amax > 0.0 {
        (amax.log2().floor() - 2.0 + 127.0).clamp(0.0, 254.0) as u8
    } else {
        0
    };
    let d = e8m0_to_f32_half(e);
    b[0] = e;
    let nearest = |v: f32| -> u8 {
        let mut best = (f32::INFINITY, 0u8);
        for (i, &k) in MXFP4_LEVELS.iter().enumerate() {
            let err = (d * k as f32 - v).abs();
            if err < best.0 {
                best = (err, i as u8);
            }
        }
        best.1
    };
    for j in 0..16 {
        b[1 + j] = nearest(x[j]) | (nearest(x[j + 16]) << 4);
    }
}
