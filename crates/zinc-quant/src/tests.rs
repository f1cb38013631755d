//! Round trips and layout checks. Bit-exactness against gguf-py lives in `tests/golden.rs`.

use super::*;
use rand::{Rng, SeedableRng};

fn gaussian(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            // Box-Muller; a spread of magnitudes across blocks like real weights.
            let u1: f32 = rng.gen_range(1e-7..1.0);
            let u2: f32 = rng.gen();
            (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
        })
        .collect()
}

/// Relative RMS error of a quantize → dequantize round trip on Gaussian data.
fn round_trip_error(ty: GgmlType, x: &[f32]) -> f32 {
    let q = quantize_to_vec(ty, x).unwrap();
    let y = dequantize_to_vec(ty, &q, x.len()).unwrap();
    let num: f64 = x
        .iter()
        .zip(&y)
        .map(|(a, b)| ((a - b) as f64).powi(2))
        .sum();
    let den: f64 = x.iter().map(|a| (*a as f64).powi(2)).sum();
    (num / den).sqrt() as f32
}

/// The bound each format must meet: relative RMS error on N(0, 1) data. A uniform quantizer with
/// `L` levels over ±3σ has RMS error ≈ 6/(L·√12)σ; block scales set by the block's own extremes
/// make it smaller. Each bound sits 1.2–2× above what these quantizers reach (seed 7).
const BOUNDS: &[(GgmlType, f32)] = &[
    (GgmlType::F32, 0.0),
    (GgmlType::F16, 3e-4),
    (GgmlType::BF16, 2.5e-3),
    (GgmlType::Q8_0, 0.007),
    (GgmlType::Q8_K, 0.01),
    (GgmlType::Q6_K, 0.025),
    (GgmlType::Q5_0, 0.05),
    (GgmlType::Q5_1, 0.05),
    (GgmlType::Q5_K, 0.05),
    (GgmlType::Q4_0, 0.11),
    (GgmlType::Q4_1, 0.1),
    (GgmlType::Q4_K, 0.095),
    (GgmlType::IQ4_NL, 0.1),
    (GgmlType::IQ4_XS, 0.1),
    (GgmlType::MXFP4, 0.2),
    (GgmlType::Q3_K, 0.2),
    (GgmlType::Q2_K, 0.35),
];

#[test]
fn every_supported_format_has_a_bound() {
    for t in SUPPORTED {
        assert!(
            BOUNDS.iter().any(|(b, _)| b == t),
            "{t} has no stated bound"
        );
    }
}

#[test]
fn round_trips_stay_within_each_formats_bound() {
    let x = gaussian(256 * 64, 7);
    let mut report = String::new();
    for &(ty, bound) in BOUNDS {
        let err = round_trip_error(ty, &x);
        let verdict = if err <= bound { "ok" } else { "EXCEEDED" };
        report.push_str(&format!("{ty}: {err:.5} (bound {bound}) {verdict}\n"));
    }
    eprintln!("{report}");
    assert!(!report.contains("EXCEEDED"), "{report}");
}

#[test]
fn zeros_and_constants_survive() {
    for &ty in SUPPORTED {
        let n = ty.block_size() * 2;
        let zeros = vec![0.0f32; n];
        let q = quantize_to_vec(ty, &zeros).unwrap();
        let y = dequantize_to_vec(ty, &q, n).unwrap();
        assert!(
            y.iter().all(|v| *v == 0.0),
            "{ty}: zeros do not round-trip: {y:?}"
        );
        let ones = vec![0.5f32; n];
        let q = quantize_to_vec(ty, &ones).unwrap();
        let y = dequantize_to_vec(ty, &q, n).unwrap();
        for v in y {
            assert!(
                (v - 0.5).abs() <= 0.5 * 0.08,
                "{ty}: a constant 0.5 came back as {v}"
            );
        }
    }
}

#[test]
fn legacy_formats_are_within_half_a_step_per_element() {
    // Q8_0: step = absmax/127, levels ±127. Q4_0: step = absmax/8 with levels −8..=7, so on the
    // side opposite the extreme the top level is 7 steps and values beyond it clip to it.
    let x = gaussian(32 * 100, 3);
    for (ty, levels, top) in [
        (GgmlType::Q8_0, 127.0f32, 127.0f32),
        (GgmlType::Q4_0, 8.0, 7.0),
        (GgmlType::Q5_0, 16.0, 15.0),
    ] {
        let q = quantize_to_vec(ty, &x).unwrap();
        let y = dequantize_to_vec(ty, &q, x.len()).unwrap();
        for (xb, yb) in x.chunks(32).zip(y.chunks(32)) {
            let amax = xb.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let step = amax / levels;
            for (a, b) in xb.iter().zip(yb) {
                // Half a step (or the clipping beyond the top level), plus the f16 rounding of d.
                let clip = (a.abs() - top * step).max(0.0);
                let bound = (step * 0.5).max(clip) + amax * 1e-3 + 1e-6;
                assert!((a - b).abs() <= bound, "{ty}: |{a} - {b}| > {bound}");
            }
        }
    }
}

#[test]
fn q8_k_matches_its_published_layout() {
    // f32 d @0, i8 qs[256] @4, i16 bsums[16] @260 equal to the sums of each group of 16.
    let x = gaussian(256 * 4, 11);
    let q = quantize_to_vec(GgmlType::Q8_K, &x).unwrap();
    assert_eq!(q.len(), 4 * 292);
    for (blk, xb) in q.chunks(292).zip(x.chunks(256)) {
        let d = f32::from_le_bytes(blk[0..4].try_into().unwrap());
        let qs: Vec<i8> = blk[4..260].iter().map(|&b| b as i8).collect();
        for g in 0..16 {
            let sum: i32 = qs[16 * g..16 * g + 16].iter().map(|&v| v as i32).sum();
            let stored = i16::from_le_bytes([blk[260 + 2 * g], blk[261 + 2 * g]]);
            assert_eq!(stored as i32, sum, "bsums[{g}]");
        }
        let amax = xb.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!((d.abs() - amax / 127.0).abs() <= amax * 1e-6);
        let y = dequantize_to_vec(GgmlType::Q8_K, blk, 256).unwrap();
        for ((a, b), q) in xb.iter().zip(&y).zip(&qs) {
            assert_eq!(*b, d * *q as f32);
            assert!((a - b).abs() <= d.abs() * 0.5 + 1e-6);
        }
    }
}

#[test]
fn bf16_rounds_to_nearest_even_and_keeps_nan() {
    assert_eq!(float::f32_to_bf16(1.0), 0x3f80);
    // 1 + 2^-8 is halfway between two bf16 values: ties go to the even one (1.0).
    assert_eq!(float::f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
    assert_eq!(float::f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
    let nan = float::f32_to_bf16(f32::from_bits(0x7f80_0001));
    assert!(
        nan & 0x7f80 == 0x7f80 && nan & 0x7f != 0,
        "NaN must stay NaN: {nan:#x}"
    );
}

#[test]
fn sizes_are_checked() {
    let ty = GgmlType::Q4_K;
    assert_eq!(
        dequantize(ty, &[0u8; 144], &mut [0.0; 100]),
        Err(QuantError::PartialBlock {
            ty,
            elements: 100,
            block: 256
        })
    );
    assert_eq!(
        dequantize(ty, &[0u8; 143], &mut [0.0; 256]),
        Err(QuantError::SizeMismatch {
            ty,
            bytes: 143,
            elements: 256
        })
    );
    assert_eq!(
        quantize_to_vec(GgmlType::IQ2_XXS, &[0.0; 256]),
        Err(QuantError::Unsupported(GgmlType::IQ2_XXS))
    );
}

#[test]
fn mxfp4_exponent_matches_ggml() {
    assert_eq!(mxfp4::e8m0_to_f32_half(127), 0.5);
    assert_eq!(mxfp4::e8m0_to_f32_half(128), 1.0);
    assert_eq!(mxfp4::e8m0_to_f32_half(0), 2f32.powi(-128));
    assert_eq!(mxfp4::e8m0_to_f32_half(1), 2f32.powi(-127));
}
