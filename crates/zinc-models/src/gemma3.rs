//! `gemma3` (`ARCHITECTURES.md §7`):
//!
//! ```text
//! x = E[tok] · √n_embd
//! per layer:  h = RMSNorm(x)·attn_norm
//!             q, k, v = W h;  q, k RMSNormed per head;  RoPE NEOX (local layers: base_swa, no scaling)
//!             x += RMSNorm(W_o · Attn(q · attn_scale, K, V))·post_attention_norm     (local: window)
//!             x += RMSNorm(GeGLU-FFN(RMSNorm(x)·ffn_norm))·post_ffw_norm
//! logits = W_out · RMSNorm(x)·output_norm        (then cap·tanh(logits/cap) if a soft-cap is set)
//! ```
//! Norm weights are stored as 1 + w by the converter and used as they are.

use std::sync::Arc;

use zinc_backend::{AttnParams, Backend, GatedAct, RopeParams, RopeStyle};
use zinc_gguf::GgufModel;

use crate::blocks::{normed, Attention, GatedFfn, Head, Loader};
use crate::{HParams, LanguageModel, ModelError};

struct Layer<B: Backend> {
    attn_norm: B::Weight,
    attn: Attention<B>,
    post_attn_norm: B::Weight,
    ffn_norm: B::Weight,
    ffn: GatedFfn<B>,
    post_ffw_norm: B::Weight,
    /// Sliding-window (local) layer.
    local: bool,
}

struct Gemma3<B: Backend> {
    hp: HParams,
    embd: B::Weight,
    layers: Vec<Layer<B>>,
    head: Head<B>,
    rope_global: RopeParams,
    rope_local: RopeParams,
    attn_global: AttnParams,
    attn_local: AttnParams,
    q_scale: f32,
    softcap: Option<f32>,
}

pub fn load<B: Backend + 'static>(
    b: &B,
    file: Arc<GgufModel>,
) -> Result<Box<dyn LanguageModel<B>>, ModelError> {
    let md = file.metadata();
    let hp = HParams::from_metadata(md)?;
    let n_swa = md
        .opt_usize(&hp.key("attention.sliding_window"))?
        .unwrap_or(0);
    let pattern = md
        .opt_usize(&hp.key("attention.sliding_window_pattern"))?
        .unwrap_or(6)
        .max(1);
    let base_swa = md
        .opt_f32(&hp.key("rope.freq_base_swa"))?
        .unwrap_or(10000.0);
    let softcap = md
        .opt_f32(&hp.key("final_logit_softcapping"))?
        .filter(|&c| c > 0.0);
    // The 27B (62 layers) scales by 1/√(n_embd/n_head); the others by 1/√key_length.
    let q_scale = if hp.n_layer == 62 {
        1.0 / ((hp.n_embd / hp.n_head) as f32).sqrt()
    } else {
        1.0 / (hp.head_dim as f32).sqrt()
    };
    let l = Loader::new(b, file);
    let embd = l.req("token_embd.weight")?;
    let mut layers = Vec::with_capacity(hp.n_layer);
    for i in 0..hp.n_layer {
        let attn = Attention::load(&l, &hp, i)?;
        if attn.q_norm.is_none() || attn.k_norm.is_none() {
            return Err(ModelError::Invalid(format!(
                "blk.{i}: gemma3 needs attn_q_norm and attn_k_norm"
            )));
        }
        layers.push(Layer {
            attn_norm: l.req(&format!("blk.{i}.attn_norm.weight"))?,
            attn,
            post_attn_norm: l.req(&format!("blk.{i}.post_attention_norm.weight"))?,
            ffn_norm: l.req(&format!("blk.{i}.ffn_norm.weight"))?,
            ffn: GatedFfn::load(&l, i)?,
            post_ffw_norm: l.req(&format!("blk.{i}.post_ffw_norm.weight"))?,
            local: n_swa > 0 && i % pattern < pattern - 1,
        });
    }
    let head = Head::load(&l, &hp)?;
    l.finish(&hp.arch, &[])?;
    let rope_global = RopeParams {
        style: RopeStyle::Neox,
        n_rot: hp.n_rot,
        freq_base: hp.freq_base,
        freq_scale: hp.freq_scale,
    };
    let rope_local = RopeParams {
        freq_base: base_swa,
        freq_scale: 1.0,
        ..rope_global
    };
    let attn_global = AttnParams {
        n_head: hp.n_head,
        n_head_kv: hp.n_head_kv,
        head_dim: hp.head_dim,
        scale: 1.0,
        window: None,
    };
    let attn_local = AttnParams {
        window: Some(n_swa),
        ..attn_global
    };
    Ok(Box::new(Gemma3 {
        hp,
        embd,
        layers,
        head,
        rope_global,
        rope_local,
        attn_global,
        attn_local,
        q_scale,
        softcap,
    }))
}

impl<B: Backend> LanguageModel<B> for Gemma3<B> {
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
        let mut x = b.embed(&self.embd, tokens, (self.hp.n_embd as f32).sqrt());
        for (i, layer) in self.layers.iter().enumerate() {
            let (rope, attn) = if layer.local {
                (&self.rope_local, &self.attn_local)
            } else {
                (&self.rope_global, &self.attn_global)
            };
            let h = normed(b, &x, &layer.attn_norm, eps);
            let o = layer.attn.attend(
                b,
                &h,
                cache,
                i,
                positions,
                &self.hp,
                rope,
                attn,
                eps,
                Some(self.q_scale),
            )?;
            let mut o = layer.attn.o.apply(b, &o);
            b.rms_norm(&mut o, &layer.post_attn_norm, eps);
            b.add(&mut x, &o);
            let h = normed(b, &x, &layer.ffn_norm, eps);
            let mut f = layer.ffn.forward(b, &h, GatedAct::GeGlu);
            b.rms_norm(&mut f, &layer.post_ffw_norm, eps);
            b.add(&mut x, &f);
        }
        let mut logits = self.head.forward(b, &x, logit_rows, eps);
        if let Some(cap) = self.softcap {
            b.softcap(&mut logits, cap);
        }
        Ok(logits)
    }
}
