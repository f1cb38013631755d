//! Model architectures, one file per family, each written once against `zinc_backend::Backend`.
//!
//! Where a token's logits come from: [`LanguageModel::forward`] of the model's family file
//! (`llama.rs`, `qwen.rs`, `qwen3moe.rs`, `gemma3.rs`), built from the blocks in `blocks.rs`.
//! Hyper-parameters come from GGUF metadata (`hparams.rs`), tensor names are GGUF's own, and
//! every tensor in the file must be consumed by the architecture or be on its ignore list.
//!
//! Adding an architecture: a new file and one line in `registry()`.

mod blocks;
mod gemma3;
mod hparams;
mod llama;
mod qwen;
mod qwen3moe;
pub mod synth;

use std::sync::Arc;

use zinc_backend::{Backend, BackendError};
use zinc_gguf::{GgufError, GgufModel};

pub use hparams::HParams;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("architecture {0:?} is not supported (supported: {1})")]
    UnsupportedArch(String, String),
    #[error(transparent)]
    Metadata(#[from] GgufError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("{0}")]
    Invalid(String),
    #[error("the model file has tensors the {arch} architecture does not use: {names}")]
    UnusedTensors { arch: String, names: String },
}

/// A loaded model, ready to run on backend `B`.
pub trait LanguageModel<B: Backend>: Send + Sync {
    fn hparams(&self) -> &HParams;

    /// A KV cache for `n_ctx` positions.
    fn new_cache(&self, b: &B, n_ctx: usize) -> B::KvCache;

    /// Runs `tokens` (at `positions`) through the model, storing their K/V in `cache`, and returns
    /// the logits of the token rows listed in `logit_rows` (one row each, `n_vocab` wide; none
    /// skips the output head).
    fn forward(
        &self,
        b: &B,
        cache: &mut B::KvCache,
        tokens: &[u32],
        positions: &[u32],
        logit_rows: &[usize],
    ) -> Result<B::Tensor, ModelError>;
}

type Constructor<B> = fn(&B, Arc<GgufModel>) -> Result<Box<dyn LanguageModel<B>>, ModelError>;

/// Architecture names and their loaders.
fn registry<B: Backend + 'static>() -> Vec<(&'static [&'static str], Constructor<B>)> {
    vec![
        (&["llama"], llama::load::<B>),
        (&["qwen2", "qwen3"], qwen::load::<B>),
        (&["qwen3moe"], qwen3moe::load::<B>),
        (&["gemma3"], gemma3::load::<B>),
    ]
}

/// Loads the model in `file` for backend `b`: hyper-parameters checked, every weight placed,
/// every tensor accounted for.
pub fn load<B: Backend + 'static>(
    b: &B,
    file: Arc<GgufModel>,
) -> Result<Box<dyn LanguageModel<B>>, ModelError> {
    let arch = file.metadata().architecture()?.to_string();
    for (names, ctor) in registry::<B>() {
        if names.contains(&arch.as_str()) {
            return ctor(b, file);
        }
    }
    Err(ModelError::UnsupportedArch(
        arch,
        supported_architectures::<B>().join(", "),
    ))
}

/// The architectures this build can run.
pub fn supported_architectures<B: Backend + 'static>() -> Vec<&'static str> {
    registry::<B>()
        .into_iter()
        .flat_map(|(names, _)| names.iter().copied())
        .collect()
}
