//! llama, qwen3 and qwen3moe have no real weights here: tiny random-weight models written by our GGUF
//! writer (`tests/fixtures/tiny/*.gguf`, from `examples/make_tiny_models.rs`) are run by llama.cpp
//! (`scripts/llama/llama_logits.cpp`, commit 0c1e570) and by us on the same 16 tokens; every
//! position's logits must agree closely, and the argmax must agree wherever llama.cpp's best
//! token leads its runner-up by more than the noise (the llama model has a 0.017 near-tie at
//! position 3).

use std::sync::Arc;

use serde_json::Value as Json;
use zinc_backend::cpu::CpuBackend;
use zinc_backend::Backend;
use zinc_gguf::GgufModel;
use zinc_testdata::repo_root;

/// The logits span about ±3.5; llama.cpp sums in another order (and, where a Q8 activation sits
/// on a rounding tie, may round it the other way), which moves a logit by a few hundredths.
const MAX_ABS_DIFF: f32 = 0.06;

fn check(name: &str) {
    let dir = repo_root().join("tests/fixtures/tiny");
    let fx: Json = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.llama-logits.json"))).unwrap(),
    )
    .unwrap();
    let tokens: Vec<u32> = fx["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap() as u32)
        .collect();
    let want: Vec<Vec<f32>> = fx["logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    let b = CpuBackend::new();
    let file = Arc::new(GgufModel::open(dir.join(format!("{name}.gguf"))).unwrap());
    let model = zinc_models::load(&b, file).unwrap();
    let n = tokens.len();
    let mut cache = model.new_cache(&b, n);
    let positions: Vec<u32> = (0..n as u32).collect();
    let rows: Vec<usize> = (0..n).collect();
    let got = b.read(
        &model
            .forward(&b, &mut cache, &tokens, &positions, &rows)
            .unwrap(),
    );
    let n_vocab = model.hparams().n_vocab;
    assert_eq!(got.len(), n * n_vocab);
    let argmax = |r: &[f32]| (0..r.len()).max_by(|&a, &c| r[a].total_cmp(&r[c])).unwrap();
    let mut worst = 0.0f32;
    for (t, w) in want.iter().enumerate() {
        let g = &got[t * n_vocab..(t + 1) * n_vocab];
        let diff = g
            .iter()
            .zip(w)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        worst = worst.max(diff);
        assert!(
            diff <= MAX_ABS_DIFF,
            "{name} position {t}: max |Δlogit| = {diff}"
        );
        let best = argmax(w);
        let runner_up = w
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != best)
            .map(|(_, &v)| v)
            .fold(f32::MIN, f32::max);
        let lead = w[best] - runner_up;
        if lead > 2.0 * MAX_ABS_DIFF {
            assert_eq!(
                argmax(g),
                best,
                "{name} position {t}: argmax differs (llama.cpp leads by {lead})"
            );
        }
    }
    eprintln!("{name}: worst |Δlogit| = {worst}");
}

#[test]
fn tiny_qwen3_matches_llama_cpp() {
    check("qwen3-tiny");
}

#[test]
fn tiny_llama_matches_llama_cpp() {
    check("llama-tiny");
}

#[test]
fn tiny_qwen3moe_matches_llama_cpp() {
    check("qwen3moe-tiny");
}

#[test]
fn tiny_qwen3moe_with_expert_scales_matches_llama_cpp() {
    check("qwen3moe-scaled-tiny");
}

/// Fused `ffn_gate_up_exps` (gate rows first per expert): llama.cpp takes it only for newer
/// architectures, so the check is that fusing qwen3moe-tiny's gate and up changes nothing.
#[test]
fn fused_gate_up_experts_equal_separate_ones() {
    use zinc_gguf::GgufWriter;
    let dir = repo_root().join("tests/fixtures/tiny");
    let src = GgufModel::open(dir.join("qwen3moe-tiny.gguf")).unwrap();
    let mut w = GgufWriter::new();
    for (k, v) in src.metadata().iter() {
        w.set(k, v.clone()).unwrap();
    }
    for t in src.tensors() {
        let name = &t.info.name;
        if name.ends_with("ffn_up_exps.weight") {
            continue;
        }
        if let Some(p) = name.strip_suffix(".ffn_gate_exps.weight") {
            let up = src.get(&format!("{p}.ffn_up_exps.weight")).unwrap();
            let n_exp = t.info.dims[2] as usize;
            let per = t.data.len() / n_exp;
            let mut fused = Vec::with_capacity(2 * t.data.len());
            for e in 0..n_exp {
                fused.extend_from_slice(&t.data[e * per..(e + 1) * per]);
                fused.extend_from_slice(&up.data[e * per..(e + 1) * per]);
            }
            let dims = [t.info.dims[0], 2 * t.info.dims[1], t.info.dims[2]];
            w.add_tensor(
                &format!("{p}.ffn_gate_up_exps.weight"),
                t.info.ty,
                &dims,
                fused,
            )
            .unwrap();
            continue;
        }
        w.add_tensor(name, t.info.ty, &t.info.dims, t.data.to_vec())
            .unwrap();
    }
    let tmp = std::env::temp_dir().join(format!("zinc-fused-{}.gguf", std::process::id()));
    w.write_to(&tmp).unwrap();
    let b = CpuBackend::new();
    let run = |path: &std::path::Path| {
        let model = zinc_models::load(&b, Arc::new(GgufModel::open(path).unwrap())).unwrap();
        let tokens = [256u32, 72, 101, 108, 108, 111];
        let mut cache = model.new_cache(&b, tokens.len());
        let out = model
            .forward(
                &b,
                &mut cache,
                &tokens,
                &[0, 1, 2, 3, 4, 5],
                &[0, 1, 2, 3, 4, 5],
            )
            .unwrap();
        b.read(&out)
    };
    let separate = run(&dir.join("qwen3moe-tiny.gguf"));
    let fused = run(&tmp);
    let _ = std::fs::remove_file(&tmp);
    assert_eq!(separate, fused);
}
