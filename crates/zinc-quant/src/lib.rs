//! GGML block formats: exact layouts, `dequantize` to f32 and reference `quantize` from f32.
//!
//! Layouts follow `ARCHITECTURES.md §11`. Dequantization is bit-exact with gguf-py's
//! `gguf.quants.dequantize` (the operation order of each format is kept, since f32 products are
//! not associative); `tests/golden.rs` checks that against committed vectors.
//!
//! Quantizers are reference quality: round-to-nearest with each format's scale rules and, for the
//! K- and IQ formats, a small least-squares scale search. They exist for tests and for
//! `zinc synth`, not for producing production models.

mod float;
mod iquants;
mod kquants;
mod legacy;
mod mxfp4;
mod types;

pub use float::f32_to_bf16;
pub use iquants::IQ4_LEVELS;
pub use kquants::scale_min_k4_all;
pub use mxfp4::{e8m0_to_f32_half, MXFP4_LEVELS};
pub use types::{GgmlType, SUPPORTED};

/// Errors from converting between f32 and a block format.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QuantError {
    #[error("tensor type {0} is not supported for (de)quantization")]
    Unsupported(GgmlType),
    #[error("{ty}: {elements} elements is not a whole number of {block}-element blocks")]
    PartialBlock {
        ty: GgmlType,
        elements: usize,
        block: usize,
    },
    #[error("{ty}: {bytes} bytes of blocks do not hold {elements} elements")]
    SizeMismatch {
        ty: GgmlType,
        bytes: usize,
        elements: usize,
    },
}

/// Checks that `bytes` of `ty` blocks hold exactly `elements` values; returns the block count.
fn check_sizes(ty: GgmlType, bytes: usize, elements: usize) -> Result<usize, QuantError> {
    if !ty.is_supported() {
        return Err(QuantError::Unsupported(ty));
    }
    let block = ty.block_size();
    if !elements.is_multiple_of(block) {
        return Err(QuantError::PartialBlock {
            ty,
            elements,
            block,
        });
    }
    let blocks = elements / block;
    if blocks.checked_mul(ty.type_size()) != Some(bytes) {
        return Err(QuantError::SizeMismatch {
            ty,
            bytes,
            elements,
        });
    }
    Ok(blocks)
}

/// Runs `f` over every (block bytes, block values) pair.
fn per_block<F: FnMut(&[u8], &mut [f32])>(ty: GgmlType, src: &[u8], dst: &mut [f32], mut f: F) {
    for (b, y) in src
        .chunks_exact(ty.type_size())
        .zip(dst.chunks_exact_mut(ty.block_size()))
    {
        f(b, y);
    }
}

/// Runs `f` over every (block values, block bytes) pair.
fn per_block_mut<F: FnMut(&[f32], &mut [u8])>(ty: GgmlType, src: &[f32], dst: &mut [u8], mut f: F) {
    for (x, b) in src
        .chunks_exact(ty.block_size())
        .zip(dst.chunks_exact_mut(ty.type_size()))
    {
        f(x, b);
    }
}

/// Decodes `src`, a run of whole `ty` blocks, into `dst` (one f32 per element).
pub fn dequantize(ty: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<(), QuantError> {
    check_sizes(ty, src.len(), dst.len())?;
    use GgmlType as T;
    match ty {
        T::F32 => float::dequantize_f32(src, dst),
        T::F16 => float::dequantize_f16(src, dst),
        T::BF16 => float::dequantize_bf16(src, dst),
        T::Q4_0 => per_block(ty, src, dst, legacy::dequantize_q4_0),
        T::Q4_1 => per_block(ty, src, dst, legacy::dequantize_q4_1),
        T::Q5_0 => per_block(ty, src, dst, legacy::dequantize_q5_0),
        T::Q5_1 => per_block(ty, src, dst, legacy::dequantize_q5_1),
        T::Q8_0 => per_block(ty, src, dst, legacy::dequantize_q8_0),
        T::Q2_K => per_block(ty, src, dst, kquants::dequantize_q2_k),
        T::Q3_K => per_block(ty, src, dst, kquants::dequantize_q3_k),
        T::Q4_K => per_block(ty, src, dst, kquants::dequantize_q4_k),
        T::Q5_K => per_block(ty, src, dst, kquants::dequantize_q5_k),
        T::Q6_K => per_block(ty, src, dst, kquants::dequantize_q6_k),
        T::Q8_K => per_block(ty, src, dst, kquants::dequantize_q8_k),
        T::IQ4_NL => per_block(ty, src, dst, iquants::dequantize_iq4_nl),
        T::IQ4_XS => per_block(ty, src, dst, iquants::dequantize_iq4_xs),
        T::MXFP4 => per_block(ty, src, dst, mxfp4::dequantize_mxfp4),
        other => return Err(QuantError::Unsupported(other)),
    }
    Ok(())
}

/// Encodes `src` into whole `ty` blocks in `dst`.
pub fn quantize(ty: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<(), QuantError> {
    check_sizes(ty, dst.len(), src.len())?;
    use GgmlType as T;
    match ty {
        T::F32 => float::quantize_f32(src, dst),
        T::F16 => float::quantize_f16(src, dst),
        T::BF16 => float::quantize_bf16(src, dst),
        T::Q4_0 => per_block_mut(ty, src, dst, legacy::quantize_q4_0),
        T::Q4_1 => per_block_mut(ty, src, dst, legacy::quantize_q4_1),
        T::Q5_0 => per_block_mut(ty, src, dst, legacy::quantize_q5_0),
        T::Q5_1 => per_block_mut(ty, src, dst, legacy::quantize_q5_1),
        T::Q8_0 => per_block_mut(ty, src, dst, legacy::quantize_q8_0),
        T::Q2_K => per_block_mut(ty, src, dst, kquants::quantize_q2_k),
        T::Q3_K => per_block_mut(ty, src, dst, kquants::quantize_q3_k),
        T::Q4_K => per_block_mut(ty, src, dst, kquants::quantize_q4_k),
        T::Q5_K => per_block_mut(ty, src, dst, kquants::quantize_q5_k),
        T::Q6_K => per_block_mut(ty, src, dst, kquants::quantize_q6_k),
        T::Q8_K => per_block_mut(ty, src, dst, kquants::quantize_q8_k),
        T::IQ4_NL => per_block_mut(ty, src, dst, iquants::quantize_iq4_nl),
        T::IQ4_XS => per_block_mut(ty, src, dst, iquants::quantize_iq4_xs),
        T::MXFP4 => per_block_mut(ty, src, dst, mxfp4::quantize_mxfp4),
        other => return Err(QuantError::Unsupported(other)),
    }
    Ok(())
}

/// `dequantize` into a new vector of `elements` values.
pub fn dequantize_to_vec(
    ty: GgmlType,
    src: &[u8],
    elements: usize,
) -> Result<Vec<f32>, QuantError> {
    check_sizes(ty, src.len(), elements)?;
    let mut out = vec![0.0; elements];
    dequantize(ty, src, &mut out)?;
    Ok(out)
}

/// `quantize` into a new vector of whole blocks.
pub fn quantize_to_vec(ty: GgmlType, src: &[f32]) -> Result<Vec<u8>, QuantError> {
    if !ty.is_supported() {
        return Err(QuantError::Unsupported(ty));
    }
    let block = ty.block_size();
    if !src.len().is_multiple_of(block) {
        return Err(QuantError::PartialBlock {
            ty,
            elements: src.len(),
            block,
        });
    }
    let mut out = vec![0u8; src.len() / block * ty.type_size()];
    quantize(ty, src, &mut out)?;
    Ok(out)
}

/// Little-endian f16 at `b[at..at + 2]`, widened exactly to f32.
#[inline]
pub(crate) fn f16_at(b: &[u8], at: usize) -> f32 {
    half::f16::from_bits(u16::from_le_bytes([b[at], b[at + 1]])).to_f32()
}

/// Stores `v` rounded to f16 at `b[at..at + 2]`; returns the value actually stored.
#[inline]
pub(crate) fn put_f16(b: &mut [u8], at: usize, v: f32) -> f32 {
    let h = half::f16::from_f32(v);
    b[at..at + 2].copy_from_slice(&h.to_bits().to_le_bytes());
    h.to_f32()
}

/// Round half away from zero, as C's `roundf` (what ggml's reference quantizers use).
#[inline]
pub(crate) fn round_away(v: f32) -> f32 {
    v.round()
}

#[cfg(test)]
mod tests;
