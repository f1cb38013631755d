//! Prompt batching and session state on a tiny synthetic model (no downloads).
//!
//! Different batchings run different kernel widths (8-, 4-, 1-token), which sum in a different
//! f32 order; the random-weight model amplifies such last-bit differences through its f16 V
//! accumulation to a few hundredths of a logit (the same effect measured against llama.cpp in
//! `zinc-models/tests/tiny_vs_llama.rs`). A batching bug — a wrong position, a cache row
//! overwritten — moves logits by whole units, so `TOL` tells them apart.

use std::sync::Arc;

use zinc_backend::cpu::CpuBackend;
use zinc_engine::{Engine, EngineError, Logits};
use zinc_gguf::GgufModel;
use zinc_testdata::repo_root;
use zinc_tokenizer::Tokenizer;

const TOL: f32 = 0.1;

fn tiny() -> Engine<CpuBackend> {
    let file =
        Arc::new(GgufModel::open(repo_root().join("tests/fixtures/tiny/qwen3-tiny.gguf")).unwrap());
    let b = CpuBackend::new();
    let tok = Tokenizer::from_metadata(file.metadata()).unwrap();
    let model = zinc_models::load(&b, file).unwrap();
    Engine::new(b, model, tok)
}

#[test]
fn batch_size_does_not_change_the_result() {
    let tokens: Vec<u32> = (0..40).map(|i| (i * 37 % 500) as u32).collect();
    let mut e = tiny();
    let whole = e.session(64).eval(&tokens, Logits::All).unwrap();
    e.batch = 7;
    let chunked = e.session(64).eval(&tokens, Logits::All).unwrap();
    let last = e.session(64).eval(&tokens, Logits::Last).unwrap();
    assert_eq!(whole.len(), 40);
    assert_eq!(chunked.len(), 40);
    assert_eq!(last.len(), 1);
    for (a, b) in whole.iter().zip(&chunked) {
        let d = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(d < TOL, "chunked prompt differs by {d}");
    }
    assert_eq!(&last[0], chunked.last().unwrap());
}

#[test]
fn incremental_evaluation_continues_the_sequence() {
    let e = tiny();
    let tokens: Vec<u32> = (0..12).map(|i| (i * 11 % 500) as u32).collect();
    let all = e.session(32).eval(&tokens, Logits::All).unwrap();
    let mut s = e.session(32);
    s.eval(&tokens[..5], Logits::Last).unwrap();
    let rest = s.eval(&tokens[5..], Logits::All).unwrap();
    assert_eq!(s.n_past(), 12);
    for (a, b) in all[5..].iter().zip(&rest) {
        let d = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(d < TOL, "{d}");
    }
    let err = s.eval(&[1; 21], Logits::Last).unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::ContextOverflow {
                prompt: 33,
                n_ctx: 32
            }
        ),
        "{err}"
    );
    assert_eq!(
        s.n_past(),
        12,
        "a refused evaluation leaves the session as it was"
    );
}

/// `eval_last_with` lends the same logits `eval` returns, continues the sequence as `eval` does,
/// and refuses an empty input.
#[test]
fn logits_lent_in_place_are_the_ones_eval_returns() {
    let e = tiny();
    let tokens: Vec<u32> = (0..9).map(|i| (i * 23 % 500) as u32).collect();
    let mut a = e.session(32);
    let mut b = e.session(32);
    let want = a.eval(&tokens[..6], Logits::Last).unwrap().pop().unwrap();
    let got = b.eval_last_with(&tokens[..6], <[f32]>::to_vec).unwrap();
    assert_eq!(got, want);
    // One token more on each: the same step after the same cache.
    let want = a.eval(&tokens[6..7], Logits::Last).unwrap().pop().unwrap();
    let (n, first) = b
        .eval_last_with(&tokens[6..7], |l| (l.len(), l[0]))
        .unwrap();
    assert_eq!((n, first), (want.len(), want[0]));
    assert_eq!(b.n_past(), 7);
    assert!(matches!(
        b.eval_last_with(&[], |_| ()),
        Err(EngineError::EmptyPrompt)
    ));
    assert_eq!(b.n_past(), 7);
}
