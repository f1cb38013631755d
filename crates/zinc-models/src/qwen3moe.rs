//! `qwen3moe` (`ARCHITECTURES.md §5`): qwen3 attention (per-head Q/K norm, NEOX RoPE) with a
//! mixture-of-experts FFN: softmax over all experts, top-k, renormalised, SwiGLU experts.

use std::sync::Arc;

use zinc_backend::{Backend, RopeStyle};
use zinc_gguf::GgufModel;

use crate::llama::{Decoder, DecoderKind};
use crate::{LanguageModel, ModelError};

pub fn load<B: Backend + 'static>(
    b: &B,
    file: Arc<GgufModel>,
) -> Result<Box<dyn LanguageModel<B>>, ModelError> {
    let kind = DecoderKind {
        rope: RopeStyle::Neox,
        qk_norm: true,
        moe: true,
    };
    Ok(Box::new(Decoder::load(b, file, kind)?))
}
