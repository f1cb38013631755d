//! Sampling: penalties, then top-k → top-p → min-p on the raw distribution, then temperature and
//! a seeded draw — llama.cpp's default chain and defaults. Temperature ≤ 0 is greedy.

use rand::{Rng, SeedableRng};

#[derive(Clone, Debug, PartialEq)]
pub struct SamplerConfig {
    pub temperature: f32,
    /// Keep the k most likely tokens (0: all).
    pub top_k: usize,
    /// Keep the smallest set whose probability reaches p (1.0: all).
    pub top_p: f32,
    /// Keep tokens at least `min_p` times as likely as the best (0: all).
    pub min_p: f32,
    /// Divide positive / multiply negative logits of recent tokens (1.0: off).
    pub repeat_penalty: f32,
    /// Subtract once per recent token present (0: off).
    pub presence_penalty: f32,
    /// Subtract per occurrence of a recent token (0: off).
    pub frequency_penalty: f32,
    /// How many recent tokens the penalties look at.
    pub penalty_last_n: usize,
    pub seed: u64,
}

impl Default for SamplerConfig {
    /// llama.cpp's defaults (`common_params_sampling`), penalties off.
    fn default() -> Self {
        SamplerConfig {
            temperature: 0.8,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.0,
            presence_penalty: 0.0,
            frequency_penalty: 0.0,
            penalty_last_n: 64,
            seed: 0xFFFF_FFFF,
        }
    }
}

impl SamplerConfig {
    pub fn greedy() -> Self {
        SamplerConfig {
            temperature: 0.0,
            ..Default::default()
        }
    }

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }
}

pub struct Sampler {
    cfg: SamplerConfig,
    rng: rand::rngs::StdRng,
}

/// A candidate token and its (adjusted) logit.
#[derive(Clone, Copy, Debug)]
struct Cand {
    id: u32,
    logit: f32,
}

impl Sampler {
    pub fn new(cfg: SamplerConfig) -> Sampler {
        let rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
        Sampler { cfg, rng }
    }

    pub fn config(&self) -> &SamplerConfig {
        &self.cfg
    }

    /// Applies the penalties for `recent` tokens to `logits` in place.
    pub fn apply_penalties(&self, logits: &mut [f32], recent: &[u32]) {
        let c = &self.cfg;
        if c.repeat_penalty == 1.0 && c.presence_penalty == 0.0 && c.frequency_penalty == 0.0 {
            return;
        }
        let window = &recent[recent.len().saturating_sub(c.penalty_last_n)..];
        let mut counts: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for &t in window {
            *counts.entry(t).or_insert(0) += 1;
        }
        for (&t, &n) in &counts {
            let Some(l) = logits.get_mut(t as usize) else {
                continue;
            };
            if *l <= 0.0 {
                *l *= c.repeat_penalty;
            } else {
                *l /= c.repeat_penalty;
            }
            *l -= n as f32 * c.frequency_penalty + c.presence_penalty;
        }
    }

    /// The filtered distribution before the draw: (token, probability) pairs summing to 1, most
    /// likely first. Exposed so tests can compare draws with it.
    pub fn distribution(&self, logits: &[f32]) -> Vec<(u32, f32)> {
        let c = &self.cfg;
        let mut cands: Vec<Cand> = logits
            .iter()
            .enumerate()
            .map(|(i, &l)| Cand {
                id: i as u32,
                logit: l,
            })
            .collect();
        cands.sort_by(|a, b| b.logit.total_cmp(&a.logit).then(a.id.cmp(&b.id)));
        if c.top_k > 0 && c.top_k < cands.len() {
            cands.truncate(c.top_k);
        }
        if c.top_p < 1.0 {
            let probs = softmax(&cands, 1.0);
            let mut cum = 0.0f32;
            let mut keep = cands.len();
            for (i, p) in probs.iter().enumerate() {
                cum += p;
                if cum >= c.top_p {
                    keep = i + 1;
                    break;
                }
            }
            cands.truncate(keep.max(1));
        }
        if c.min_p > 0.0 {
            let max = cands[0].logit;
            let floor = max + c.min_p.ln();
            let keep = cands.iter().take_while(|x| x.logit >= floor).count();
            cands.truncate(keep.max(1));
        }
        let probs = softmax(&cands, c.temperature);
        cands.iter().zip(probs).map(|(x, p)| (x.id, p)).collect()
    }

    /// Picks the next token from `logits` (penalties for `recent` applied first).
    pub fn sample(&mut self, logits: &mut [f32], recent: &[u32]) -> u32 {
        self.apply_penalties(logits, recent);
        if self.cfg.is_greedy() {
            return argmax(logits);
        }
        let dist = self.distribution(logits);
        let r: f32 = self.rng.gen();
        let mut cum = 0.0;
        for &(id, p) in &dist {
            cum += p;
            if r < cum {
                return id;
            }
        }
        dist.last().map(|&(id, _)| id).unwrap_or(0)
    }
}

fn softmax(cands: &[Cand], temp: f32) -> Vec<f32> {
    let t = if temp > 0.0 { temp } else { 1.0 };
    let max = cands.iter().fold(f32::NEG_INFINITY, |m, c| m.max(c.logit));
    let e: Vec<f32> = cands.iter().map(|c| ((c.logit - max) / t).exp()).collect();
    let z: f32 = e.iter().sum();
    e.into_iter().map(|v| v / z).collect()
}

/// Index of the largest logit (the first on ties).
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &v) in logits.iter().enumerate() {
        if v > logits[best] {
            best = i;
        }
    }
    best as u32
}

#[cfg(test)]
mod tests;
