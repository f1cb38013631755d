//! `zinc perplexity`: llama.cpp's method. The text is tokenized once (BOS per the model), cut into
//! non-overlapping chunks of `ctx` tokens whose first token becomes BOS when the model adds one,
//! and the second half of each chunk is scored: `PPL = exp(mean NLL)`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use zinc_engine::Logits;

use crate::load::{self, ModelArgs};

#[derive(clap::Args)]
pub struct PerplexityArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The text file to score.
    #[arg(short, long)]
    pub file: PathBuf,
    /// Tokens per chunk.
    #[arg(short = 'c', long, default_value_t = 512)]
    pub ctx: usize,
    /// Score only the first N chunks.
    #[arg(long)]
    pub chunks: Option<usize>,
}

/// Negative log-likelihood of `target` under `logits` (log-softmax in f64).
fn nll(logits: &[f32], target: u32) -> f64 {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
    let sum: f64 = logits.iter().map(|&v| (v as f64 - max).exp()).sum();
    -(logits[target as usize] as f64 - max - sum.ln())
}

pub struct PplResult {
    pub ppl: f64,
    pub stderr: f64,
    pub chunks: usize,
}

pub fn perplexity(args: &PerplexityArgs) -> Result<()> {
    let r = compute(args)?;
    println!(
        "Final estimate: PPL = {:.4} +/- {:.5} ({} chunks of {} tokens)",
        r.ppl, r.stderr, r.chunks, args.ctx
    );
    Ok(())
}

pub fn compute(args: &PerplexityArgs) -> Result<PplResult> {
    load::no_clock(&args.model, "perplexity")?;
    let (engine, _) = load::engine(&args.model)?;
    crate::with_engine!(engine, e => compute_with(args, e))
}

fn compute_with<B: zinc_backend::Backend>(
    args: &PerplexityArgs,
    engine: zinc_engine::Engine<B>,
) -> Result<PplResult> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let tok = &engine.tokenizer;
    let tokens = tok.encode(&text, true, false);
    let n_ctx = args.ctx;
    if n_ctx < 4 {
        bail!("--ctx must be at least 4");
    }
    let available = tokens.len() / n_ctx;
    let n_chunks = args.chunks.map_or(available, |c| c.min(available));
    if n_chunks == 0 {
        bail!(
            "{} tokens are not enough for one chunk of {n_ctx}",
            tokens.len()
        );
    }
    eprintln!(
        "zinc: {} tokens, scoring {n_chunks} chunks of {n_ctx}",
        tokens.len()
    );
    let first = n_ctx / 2;
    let mut sum = 0.0f64;
    let mut sum_sq = 0.0f64;
    let mut count = 0usize;
    let mut running = String::new();
    for c in 0..n_chunks {
        let mut chunk = tokens[c * n_ctx..(c + 1) * n_ctx].to_vec();
        if tok.add_bos() {
            if let Some(bos) = tok.bos() {
                chunk[0] = bos;
            }
        }
        let mut session = engine.session(n_ctx);
        let logits = session.eval(&chunk, Logits::All)?;
        for j in first..n_ctx - 1 {
            let v = nll(&logits[j], tokens[c * n_ctx + j + 1]);
            sum += v;
            sum_sq += v * v;
            count += 1;
        }
        let ppl = (sum / count as f64).exp();
        running.push_str(&format!("[{}]{ppl:.4},", c + 1));
        eprintln!("{running}");
    }
    let mean = sum / count as f64;
    let var = (sum_sq / count as f64 - mean * mean).max(0.0);
    let ppl = mean.exp();
    Ok(PplResult {
        ppl,
        stderr: ppl * (var / (count as f64 - 1.0).max(1.0)).sqrt(),
        chunks: n_chunks,
    })
}
