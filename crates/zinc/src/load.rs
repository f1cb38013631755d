//! Loading a model for the commands that run one: the file, the backend, the tokenizer.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use zinc_backend::cpu::CpuBackend;
use zinc_backend::Backend;
use zinc_engine::Engine;
use zinc_gguf::GgufModel;
use zinc_tokenizer::Tokenizer;

/// Options every model-running command shares.
#[derive(clap::Args, Clone, Debug)]
pub struct ModelArgs {
    /// The GGUF model (any shard of a split model).
    #[arg(short, long)]
    pub model: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Backend to run on. Only `cpu` exists in this build.
    #[arg(long, default_value = "cpu")]
    pub backend: String,
}

/// Sets the size of the worker pool once, before any work runs.
pub fn init_threads(threads: Option<usize>) -> Result<()> {
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("cannot set up the worker threads")?;
    }
    Ok(())
}

pub fn open_file(path: &PathBuf) -> Result<Arc<GgufModel>> {
    Ok(Arc::new(GgufModel::open(path)?))
}

pub fn cpu_backend(args: &ModelArgs) -> Result<CpuBackend> {
    match args.backend.as_str() {
        "cpu" | "auto" => {}
        other => {
            anyhow::bail!("backend {other:?} is not available in this build (available: cpu, auto)")
        }
    }
    init_threads(args.threads)?;
    Ok(CpuBackend::new())
}

/// Loads model and tokenizer; reports the load time on stderr. The mapped file comes back too,
/// for callers that need more of its metadata (chat template, sizes).
pub fn engine(args: &ModelArgs) -> Result<(Engine<CpuBackend>, Arc<GgufModel>)> {
    let file = open_file(&args.model)?;
    Ok((engine_from(args, file.clone())?, file))
}

/// Builds the engine for an already-opened model file.
pub fn engine_from(args: &ModelArgs, file: Arc<GgufModel>) -> Result<Engine<CpuBackend>> {
    let t0 = Instant::now();
    let b = cpu_backend(args)?;
    let tokenizer = Tokenizer::from_metadata(file.metadata())
        .with_context(|| format!("{}: cannot build the tokenizer", args.model.display()))?;
    let model = zinc_models::load(&b, file.clone())
        .with_context(|| format!("cannot load {}", args.model.display()))?;
    eprintln!(
        "zinc: loaded {} ({}, {} layers) on {} in {:.2} s",
        args.model.display(),
        model.hparams().arch,
        model.hparams().n_layer,
        b.name(),
        t0.elapsed().as_secs_f64()
    );
    Ok(Engine::new(b, model, tokenizer))
}
