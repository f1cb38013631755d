//! `zinc synth`: full-size GGUF files with random weights in real models' shapes, for
//! benchmarks on machines where the real weights cannot be downloaded. llama.cpp loads them.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

#[derive(clap::Args)]
pub struct SynthArgs {
    /// Shape: qwen3-0.6b, qwen3-8b or qwen3-30b-a3b.
    #[arg(long)]
    pub preset: String,
    /// File type: q4_k_m (Q4_K, with Q6_K for attn_v, ffn_down and output), q8_0, q4_0, f16.
    #[arg(long = "type", default_value = "q4_k_m")]
    pub file_type: String,
    /// Architecture (implied by the preset; given, it must match).
    #[arg(long)]
    pub arch: Option<String>,
    /// Seed of the random weights.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn synth(args: &SynthArgs) -> Result<()> {
    let Some(mut spec) = zinc_models::synth::preset(&args.preset) else {
        bail!(
            "unknown preset {:?} (choose {})",
            args.preset,
            zinc_models::synth::PRESETS.join(", ")
        );
    };
    if let Some(a) = &args.arch {
        if *a != spec.arch {
            bail!("preset {} is a {} model, not {a}", args.preset, spec.arch);
        }
    }
    if zinc_models::synth::apply_file_type(&mut spec, &args.file_type).is_none() {
        bail!(
            "unknown --type {:?} (choose q4_k_m, q8_0, q4_0, f16)",
            args.file_type
        );
    }
    spec.seed = args.seed;
    let t0 = Instant::now();
    eprintln!(
        "zinc: writing {} ({} {}, {} layers, random weights) to {}",
        args.preset,
        spec.arch,
        args.file_type,
        spec.n_layer,
        args.output.display()
    );
    zinc_models::synth::write_synthetic(&spec, &args.output)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let size = std::fs::metadata(&args.output)
        .map(|m| m.len())
        .unwrap_or(0);
    eprintln!(
        "zinc: wrote {:.2} GiB in {:.1} s",
        size as f64 / (1u64 << 30) as f64,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
