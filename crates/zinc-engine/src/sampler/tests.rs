//! Samplers checked statistically against the analytically filtered distribution: the expected
//! probabilities are computed here from the definitions, independently of `distribution()`.

use super::*;

const LOGITS: [f32; 8] = [2.0, 1.5, 1.4, 0.3, 0.0, -0.5, -1.0, -3.0];

/// Softmax of `l / t` over the indices in `keep`.
fn expected(l: &[f32], keep: &[usize], t: f32) -> Vec<f64> {
    let z: f64 = keep.iter().map(|&i| ((l[i] / t) as f64).exp()).sum();
    (0..l.len())
        .map(|i| {
            if keep.contains(&i) {
                ((l[i] / t) as f64).exp() / z
            } else {
                0.0
            }
        })
        .collect()
}

fn draw(cfg: SamplerConfig, n: usize) -> Vec<f64> {
    let mut s = Sampler::new(cfg);
    let mut counts = vec![0usize; LOGITS.len()];
    for _ in 0..n {
        let mut l = LOGITS;
        counts[s.sample(&mut l, &[]) as usize] += 1;
    }
    counts.into_iter().map(|c| c as f64 / n as f64).collect()
}

/// Every frequency within 4.5 standard errors of its expected probability (false alarm rate
/// far below 1e-4 over all tests), and tokens that must be excluded never drawn.
fn assert_matches(freq: &[f64], want: &[f64], n: usize) {
    for (i, (&f, &p)) in freq.iter().zip(want).enumerate() {
        if p == 0.0 {
            assert_eq!(f, 0.0, "token {i} must never be drawn");
            continue;
        }
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (f - p).abs() <= 4.5 * se + 1e-9,
            "token {i}: frequency {f:.4}, expected {p:.4}"
        );
    }
}

fn cfg(temp: f32, top_k: usize, top_p: f32, min_p: f32) -> SamplerConfig {
    SamplerConfig {
        temperature: temp,
        top_k,
        top_p,
        min_p,
        seed: 1234,
        ..Default::default()
    }
}

#[test]
fn plain_temperature_sampling() {
    let n = 40_000;
    for t in [0.5f32, 1.0, 1.7] {
        let want = expected(&LOGITS, &(0..8).collect::<Vec<_>>(), t);
        assert_matches(&draw(cfg(t, 0, 1.0, 0.0), n), &want, n);
    }
}

#[test]
fn top_k_keeps_the_k_best() {
    let n = 40_000;
    assert_matches(
        &draw(cfg(1.0, 3, 1.0, 0.0), n),
        &expected(&LOGITS, &[0, 1, 2], 1.0),
        n,
    );
}

#[test]
fn top_p_keeps_the_smallest_nucleus() {
    // Probabilities at t = 1: p0 ≈ 0.339, p1 ≈ 0.206, p2 ≈ 0.186 … cumulative 0.545, 0.731:
    // top_p = 0.7 keeps three tokens.
    let all = expected(&LOGITS, &(0..8).collect::<Vec<_>>(), 1.0);
    assert!(all[0] + all[1] < 0.7 && all[0] + all[1] + all[2] >= 0.7);
    let n = 40_000;
    assert_matches(
        &draw(cfg(1.0, 0, 0.7, 0.0), n),
        &expected(&LOGITS, &[0, 1, 2], 1.0),
        n,
    );
}

#[test]
fn min_p_drops_unlikely_tokens_and_temperature_applies_after() {
    // min_p = 0.2 keeps tokens with p ≥ 0.2·p_max, i.e. logit ≥ 2 + ln 0.2 ≈ 0.39: tokens 0..=2.
    // The filter uses the raw distribution; temperature 2 then flattens the survivors.
    let n = 40_000;
    assert_matches(
        &draw(cfg(2.0, 0, 1.0, 0.2), n),
        &expected(&LOGITS, &[0, 1, 2], 2.0),
        n,
    );
}

#[test]
fn greedy_and_seeds() {
    let mut s = Sampler::new(SamplerConfig::greedy());
    let mut l = LOGITS;
    assert_eq!(s.sample(&mut l, &[]), 0);
    // Same seed, same draws; another seed, other draws.
    let seq = |seed| {
        let mut s = Sampler::new(SamplerConfig {
            seed,
            ..cfg(1.0, 0, 1.0, 0.0)
        });
        (0..64)
            .map(|_| s.sample(&mut LOGITS.clone(), &[]))
            .collect::<Vec<_>>()
    };
    assert_eq!(seq(7), seq(7));
    assert_ne!(seq(7), seq(8));
}

#[test]
fn penalties_follow_llama_cpp() {
    let s = Sampler::new(SamplerConfig {
        repeat_penalty: 2.0,
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
        ..Default::default()
    });
    let mut l = LOGITS;
    s.apply_penalties(&mut l, &[0, 0, 5, 1]);
    assert_eq!(l[0], 2.0 / 2.0 - 2.0 * 0.25 - 0.5);
    assert_eq!(l[1], 1.5 / 2.0 - 0.25 - 0.5);
    assert_eq!(l[5], -0.5 * 2.0 - 0.25 - 0.5);
    assert_eq!(l[2], 1.4);
    // Greedy sampling sees the penalised logits: token 0 loses to token 2.
    let mut g = Sampler::new(SamplerConfig {
        repeat_penalty: 2.0,
        ..SamplerConfig::greedy()
    });
    let mut l = LOGITS;
    assert_eq!(g.sample(&mut l, &[0, 1]), 2);
}
