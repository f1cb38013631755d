//! `qwen2` (`ARCHITECTURES.md §3b`) and `qwen3` (§4): the llama decoder with NEOX RoPE; qwen2
//! adds Q/K/V biases (picked up as optional `.bias` tensors), qwen3 adds per-head Q/K RMSNorm
//! before RoPE.

use std::sync::Arc;

use zinc_backend::{Backend, RopeStyle};
use zinc_gguf::GgufModel;

use crate::llama::{Decoder, DecoderKind};
use crate::{LanguageModel, ModelError};

pub fn load<B: Backend + 'static>(
    b: &B,
    file: Arc<GgufModel>,
) -> Result<Box<dyn LanguageModel<B>>, ModelError> {
    let qwen3 = file.metadata().architecture()? == "qwen3";
    let kind = DecoderKind {
        rope: RopeStyle::Neox,
        qk_norm: qwen3,
        moe: false,
    };
    Ok(Box::new(Decoder::load(b, file, kind)?))
}
