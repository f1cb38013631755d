//! Plain float arrays: F32, F16 (IEEE binary16), BF16 (upper half of an f32).

use half::f16;

pub fn dequantize_f32(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(4).zip(dst) {
        *y = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
}

pub fn quantize_f32(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.iter().zip(dst.chunks_exact_mut(4)) {
        b.copy_from_slice(&x.to_le_bytes());
    }
}

pub fn dequantize_f16(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(2).zip(dst) {
        *y = f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32();
    }
}

/// Round to nearest even, as ggml's `GGML_FP32_TO_FP16`.
pub fn quantize_f16(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.iter().zip(dst.chunks_exact_mut(2)) {
        b.copy_from_slice(&f16::from_f32(*x).to_bits().to_le_bytes());
    }
}

/// BF16 → f32 is exact: the bits move to the top half.
pub fn dequantize_bf16(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(2).zip(dst) {
        *y = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16);
    }
}

/// f32 → BF16 with round to nearest even and NaN kept quiet (ggml's `ggml_compute_fp32_to_bf16`).
pub fn quantize_bf16(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.iter().zip(dst.chunks_exact_mut(2)) {
        b.copy_from_slice(&f32_to_bf16(*x).to_le_bytes());
    }
}

#[inline]
pub fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if (u & 0x7fff_ffff) > 0x7f80_0000 {
        return ((u >> 16) | 64) as u16;
    }
    ((u as u64 + (0x7fff + ((u >> 16) & 1)) as u64) >> 16) as u16
}
