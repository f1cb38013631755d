//! CPU kernels against plain f32 references built from `zinc_quant::dequantize`.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use zinc_gguf::{GgmlType, GgufFile, GgufModel, GgufWriter};

use super::*;

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect()
}

/// A model holding one weight `w` of `ty` with `rows × cols`, built in memory.
fn model_with(ty: GgmlType, rows: usize, cols: usize, seed: u64) -> (Arc<GgufModel>, Vec<f32>) {
    let vals = random(rows * cols, seed);
    let mut w = GgufWriter::new();
    w.add_f32_tensor("w", ty, &[cols as u64, rows as u64], &vals)
        .unwrap();
    let dir = std::env::temp_dir().join(format!(
        "zinc-cpu-test-{}-{ty}-{seed}.gguf",
        std::process::id()
    ));
    w.write_to(&dir).unwrap();
    let bytes = std::fs::read(&dir).unwrap();
    let _ = std::fs::remove_file(&dir);
    let file = GgufFile::from_bytes(bytes).unwrap();
    let model = Arc::new(GgufModel::from_shards(vec![file]).unwrap());
    let t = model.get("w").unwrap();
    let deq = zinc_quant::dequantize_to_vec(ty, t.data, rows * cols).unwrap();
    (model, deq)
}

#[test]
fn matmul_matches_the_dequantized_reference_for_every_format() {
    let b = CpuBackend::new();
    // Awkward sizes: rows not a multiple of any chunk, several tokens.
    // 13 tokens: one group of 8, one of 4 and a single, so every kernel width runs.
    let (rows, n_tok) = (37, 13);
    for &ty in zinc_quant::SUPPORTED {
        if ty == GgmlType::Q8_K {
            continue; // an activation format, never a weight
        }
        let cols = ty.block_size().max(32) * 2;
        let (model, w) = model_with(ty, rows, cols, 5);
        let weight = b.weight(&model, "w").unwrap();
        let x = random(n_tok * cols, 9);
        let out = b.matmul(&weight, &b.tensor_from(&x, n_tok, cols));
        assert_eq!(b.shape(&out), (n_tok, rows));
        for t in 0..n_tok {
            let xt = &x[t * cols..(t + 1) * cols];
            let xnorm = xt.iter().map(|v| v * v).sum::<f32>().sqrt();
            for r in 0..rows {
                let wr = &w[r * cols..(r + 1) * cols];
                let want: f32 = wr.iter().zip(xt).map(|(a, b)| a * b).sum();
                let wnorm = wr.iter().map(|v| v * v).sum::<f32>().sqrt();
                // The activation is quantized to 8 bits (Q8_0/Q8_K: ≤ 1/254 of a block's max per
                // element); f16/bf16 activations round to 11/8 bits.
                let tol = match ty {
                    GgmlType::F32 => 1e-5,
                    GgmlType::BF16 => 8e-3,
                    _ => 1e-2,
                } * wnorm
                    * xnorm;
                let got = out.data[t * rows + r];
                assert!(
                    (got - want).abs() <= tol,
                    "{ty} row {r} token {t}: {got} vs {want} (tol {tol})"
                );
            }
        }
    }
}

#[test]
fn rms_norm_matches_the_formula() {
    let b = CpuBackend::new();
    let (model, g) = model_with(GgmlType::F32, 1, 64, 3);
    let w = b.weight(&model, "w").unwrap();
    let x = random(2 * 128, 4);
    let mut t = b.tensor_from(&x, 2, 128);
    b.rms_norm(&mut t, &w, 1e-6);
    // Groups of 64 (the weight's length), e.g. per head.
    for (gi, group) in x.chunks(64).enumerate() {
        let ms = group.iter().map(|v| v * v).sum::<f32>() / 64.0;
        for (i, v) in group.iter().enumerate() {
            let want = v / (ms + 1e-6).sqrt() * g[i];
            assert!((t.data[gi * 64 + i] - want).abs() < 1e-5);
        }
    }
}

#[test]
fn rope_rotates_pairs_by_position() {
    let b = CpuBackend::new();
    let hd = 8;
    let x = random(2 * hd, 1);
    for style in [RopeStyle::Norm, RopeStyle::Neox] {
        let p = RopeParams {
            style,
            n_rot: 6,
            freq_base: 10000.0,
            freq_scale: 1.0,
        };
        let mut t = b.tensor_from(&x, 1, 2 * hd);
        b.rope(&mut t, hd, &[5], &p);
        for h in 0..2 {
            let src = &x[h * hd..(h + 1) * hd];
            let dst = &t.data[h * hd..(h + 1) * hd];
            for i in 0..3 {
                let theta = 5.0f64 * 10000f64.powf(-2.0 * i as f64 / 6.0);
                let (a, bb) = if style == RopeStyle::Norm {
                    (2 * i, 2 * i + 1)
                } else {
                    (i, i + 3)
                };
                let want0 = src[a] as f64 * theta.cos() - src[bb] as f64 * theta.sin();
                let want1 = src[a] as f64 * theta.sin() + src[bb] as f64 * theta.cos();
                assert!(
                    (dst[a] as f64 - want0).abs() < 1e-5 && (dst[bb] as f64 - want1).abs() < 1e-5
                );
            }
            // Dimensions past n_rot pass through.
            assert_eq!(&dst[6..], &src[6..]);
        }
    }
}

#[test]
fn attention_matches_a_naive_softmax_with_gqa_and_window() {
    // 6 query rows take the per-row f16 path, 70 the tiled f32 path.
    for n in [6, 70] {
        attention_case(n);
    }
}

fn attention_case(n: usize) {
    let b = CpuBackend::new();
    let (n_head, n_kv, hd) = (4, 2, 8);
    let q = random(n * n_head * hd, 1);
    let k = random(n * n_kv * hd, 2);
    let v = random(n * n_kv * hd, 3);
    let mut cache = b.kv_cache(80, &[n_kv * hd]);
    let pos: Vec<u32> = (0..n as u32).collect();
    b.kv_store(
        &mut cache,
        0,
        &b.tensor_from(&k, n, n_kv * hd),
        &b.tensor_from(&v, n, n_kv * hd),
        &pos,
    )
    .unwrap();
    for window in [None, Some(3), Some(40)] {
        let p = AttnParams {
            n_head,
            n_head_kv: n_kv,
            head_dim: hd,
            scale: 0.3,
            window,
        };
        let out = b.attention(&b.tensor_from(&q, n, n_head * hd), &cache, 0, &pos, &p);
        for t in 0..n {
            for h in 0..n_head {
                let g = h / 2;
                let lo = window.map_or(0, |w| (t + 1).saturating_sub(w));
                let qh = &q[(t * n_head + h) * hd..(t * n_head + h + 1) * hd];
                let scores: Vec<f32> = (lo..=t)
                    .map(|j| {
                        0.3 * (0..hd)
                            .map(|d| qh[d] * k[(j * n_kv + g) * hd + d])
                            .sum::<f32>()
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = scores.iter().map(|s| (s - m).exp()).collect();
                let z: f32 = e.iter().sum();
                for d in 0..hd {
                    let want: f32 = (lo..=t)
                        .zip(&e)
                        .map(|(j, w)| w / z * v[(j * n_kv + g) * hd + d])
                        .sum();
                    let got = out.data[(t * n_head + h) * hd + d];
                    // f16 cache and f16-rounded Q.
                    assert!(
                        (got - want).abs() < 3e-3,
                        "t {t} h {h} d {d}: {got} vs {want}"
                    );
                }
            }
        }
    }
    let err = b.kv_store(
        &mut cache,
        0,
        &b.tensor_from(&k[..n_kv * hd], 1, n_kv * hd),
        &b.tensor_from(&v[..n_kv * hd], 1, n_kv * hd),
        &[80],
    );
    assert!(matches!(
        err,
        Err(BackendError::ContextOverflow { pos: 80, n_ctx: 80 })
    ));
}

#[test]
fn gated_activations() {
    let b = CpuBackend::new();
    let g = b.tensor_from(&[-20.0, -1.0, 0.0, 0.5, 12.0], 1, 5);
    let u = b.tensor_from(&[1.0, 2.0, 3.0, 4.0, 0.5], 1, 5);
    let s = b.gated(&g, &u, GatedAct::SwiGlu);
    for i in 0..5 {
        let x = g.data[i];
        assert!((s.data[i] - x / (1.0 + (-x).exp()) * u.data[i]).abs() < 1e-6);
    }
    let e = b.gated(&g, &u, GatedAct::GeGlu);
    assert_eq!(e.data[0], 0.0);
    assert_eq!(e.data[4], 6.0);
    let gelu = |x: f32| 0.5 * x * (1.0 + (0.797_884_6 * x * (1.0 + 0.044715 * x * x)).tanh());
    for i in 1..4 {
        assert!((e.data[i] - gelu(g.data[i]) * u.data[i]).abs() < 2e-3 * u.data[i].abs().max(1.0));
    }
}

#[test]
fn matmul_of_no_tokens_is_empty() {
    let b = CpuBackend::new();
    let (model, _) = model_with(GgmlType::Q8_0, 8, 64, 1);
    let w = b.weight(&model, "w").unwrap();
    let out = b.matmul(&w, &b.tensor(0, 64));
    assert_eq!(b.shape(&out), (0, 8));
}

/// The 8-, 4- and 1-token kernels compute the same integer sums; only f32 summation order may
/// differ. A batch of 13 tokens must agree with 13 single-token matmuls to 1e-5 relative.
#[test]
fn kernel_widths_agree() {
    let b = CpuBackend::new();
    for &ty in zinc_quant::SUPPORTED {
        if ty == GgmlType::Q8_K {
            continue;
        }
        let cols = ty.block_size().max(32) * 4;
        let rows = 19;
        let (model, _) = model_with(ty, rows, cols, 21);
        let w = b.weight(&model, "w").unwrap();
        let x = random(13 * cols, 22);
        let batch = b.matmul(&w, &b.tensor_from(&x, 13, cols));
        for t in 0..13 {
            let one = b.matmul(&w, &b.tensor_from(&x[t * cols..(t + 1) * cols], 1, cols));
            for r in 0..rows {
                let (a, c) = (batch.data[t * rows + r], one.data[r]);
                assert!(
                    (a - c).abs() <= 1e-5 * a.abs().max(1.0),
                    "{ty} token {t} row {r}: batch {a} vs single {c}"
                );
            }
        }
    }
}
