//! `llama` (`ARCHITECTURES.md §3`), and the pre-norm decoder it shares with the Qwen files:
//!
//! ```text
//! x = E[tok]
//! per layer:  x += W_o · Attn(RoPE(W_q h), RoPE(W_k h), W_v h)   with h = RMSNorm(x)·attn_norm
//!             x += FFN(RMSNorm(x)·ffn_norm)                       (SwiGLU, or a MoE of them)
//! logits = W_out · RMSNorm(x)·output_norm
//! ```

use std::sync::Arc;

use zinc_backend::{AttnParams, Backend, GatedAct, RopeParams, RopeStyle};
use zinc_gguf::GgufModel;

use crate::blocks::{normed, Attention, GatedFfn, Head, Loader, MoeFfn};
use crate::{HParams, LanguageModel, ModelError};

pub enum Ffn<B: Backend> {
    Dense(GatedFfn<B>),
    Moe(MoeFfn<B>),
}

pub struct Layer<B: Backend> {
    pub attn_norm: B::Weight,
    pub attn: Attention<B>,
    pub ffn_norm: B::Weight,
    pub ffn: Ffn<B>,
}

/// The pre-norm decoder of llama, qwen2, qwen3 and qwen3moe.
pub struct Decoder<B: Backend> {
    pub hp: HParams,
    pub embd: B::Weight,
    pub layers: Vec<Layer<B>>,
    pub head: Head<B>,
    pub rope: RopeParams,
    pub attn: AttnParams,
}

/// What distinguishes the families that share this decoder.
pub struct DecoderKind {
    pub rope: RopeStyle,
    /// Q/K RMSNorm per head (qwen3).
    pub qk_norm: bool,
    pub moe: bool,
}

impl<B: Backend> Decoder<B> {
    pub fn load(b: &B, file: Arc<GgufModel>, kind: DecoderKind) -> Result<Self, ModelError> {
        let hp = HParams::from_metadata(file.metadata())?;
        if file.get("rope_freqs.weight").is_some() {
            return Err(ModelError::Invalid(
                "rope_freqs (Llama 3.1-style RoPE frequency factors) is not supported yet".into(),
            ));
        }
        let l = Loader::new(b, file);
        let embd = l.req("token_embd.weight")?;
        l.expect_dims(
            &embd,
            "token_embd.weight",
            &[hp.n_embd as u64, hp.n_vocab as u64],
        )?;
        let mut layers = Vec::with_capacity(hp.n_layer);
        for i in 0..hp.n_layer {
            let attn = Attention::load(&l, &hp, i)?;
            if kind.qk_norm && (attn.q_norm.is_none() || attn.k_norm.is_none()) {
                return Err(ModelError::Invalid(format!(
                    "blk.{i}: {} needs attn_q_norm and attn_k_norm",
                    hp.arch
                )));
            }
            let ffn = if kind.moe {
                Ffn::Moe(MoeFfn::load(&l, &hp, i)?)
            } else {
                Ffn::Dense(GatedFfn::load(&l, i)?)
            };
            layers.push(Layer {
                attn_norm: l.req(&format!("blk.{i}.attn_norm.weight"))?,
                attn,
                ffn_norm: l.req(&format!("blk.{i}.ffn_norm.weight"))?,
                ffn,
            });
        }
        let head = Head::load(&l, &hp)?;
        l.finish(&hp.arch, &[])?;
        let rope = RopeParams {
            style: kind.rope,
            n_rot: hp.n_rot,
            freq_base: hp.freq_base,
            freq_scale: hp.freq_scale,
        };
        let attn = AttnParams {
            n_head: hp.n_head,
            n_head_kv: hp.n_head_kv,
            head_dim: hp.head_dim,
            scale: 1.0 / (hp.head_dim as f32).sqrt(),
            window: None,
        };
        Ok(Decoder {
            hp,
            embd,
            layers,
            head,
            rope,
            attn,
        })
    }
}

impl<B: Backend> LanguageModel<B> for Decoder<B> {
    fn hparams(&self) -> &HParams {
        &self.hp
    }

    fn new_cache(&self, b: &B, n_ctx: usize) -> B::KvCache {
        b.kv_cache(
            n_ctx,
            &vec![self.hp.n_head_kv * self.hp.head_dim; self.hp.n_layer],
        )
    }

    fn forward(
        &self,
        b: &B,
        cache: &mut B::KvCache,
        tokens: &[u32],
        positions: &[u32],
        logit_rows: &[usize],
    ) -> Result<B::Tensor, ModelError> {
        let eps = self.hp.eps;
        let mut x = b.embed(&self.embd, tokens, 1.0);
        let Some(first) = self.layers.first() else {
            return Ok(self.head.forward(b, &x, logit_rows, eps));
        };
        // Each residual add hands on the next pre-norm (the next layer's, then the head's), so
        // a backend can fuse the two.
        let mut h = normed(b, &x, &first.attn_norm, eps);
        for (i, layer) in self.layers.iter().enumerate() {
            let o = layer.attn.attend(
                b, &h, cache, i, positions, &self.hp, &self.rope, &self.attn, eps, None,
            )?;
            let hf = layer
                .attn
                .o
                .apply_add_norm(b, &o, &mut x, &layer.ffn_norm, eps);
            let next = self
                .layers
                .get(i + 1)
                .map_or(&self.head.norm, |l| &l.attn_norm);
            h = match &layer.ffn {
                Ffn::Dense(f) => f.forward_add_norm(b, &hf, GatedAct::SwiGlu, &mut x, next, eps),
                Ffn::Moe(m) => m.forward_add_norm(b, &hf, GatedAct::SwiGlu, &mut x, next, eps),
            };
        }
        Ok(self.head.forward_normed(b, &h, logit_rows))
    }
}

pub fn load<B: Backend + 'static>(
    b: &B,
    file: Arc<GgufModel>,
) -> Result<Box<dyn LanguageModel<B>>, ModelError> {
    let moe = file.metadata().opt_u32("llama.expert_count")?.unwrap_or(0) > 0;
    let hp = HParams::from_metadata(file.metadata())?;
    if hp.n_rot != hp.head_dim {
        return Err(ModelError::Invalid(format!(
            "llama needs rope.dimension_count ({}) equal to the head dimension ({})",
            hp.n_rot, hp.head_dim
        )));
    }
    let kind = DecoderKind {
        rope: RopeStyle::Norm,
        qk_norm: false,
        moe,
    };
    Ok(Box::new(Decoder::load(b, file, kind)?))
}
