//! Hyper-parameters every architecture reads (`ARCHITECTURES.md §2.5`).

use zinc_gguf::{Array, Metadata};

use crate::ModelError;

#[derive(Clone, Debug)]
pub struct HParams {
    pub arch: String,
    pub n_vocab: usize,
    pub n_ctx_train: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_head_kv: usize,
    /// Q/K head dimension (`attention.key_length`, default n_embd / n_head).
    pub head_dim: usize,
    pub n_ff: usize,
    pub n_rot: usize,
    pub eps: f32,
    pub freq_base: f32,
    /// `1 / rope.scaling.factor` (linear scaling), else 1.
    pub freq_scale: f32,
    pub n_expert: usize,
    pub n_expert_used: usize,
}

/// A key that may be a scalar or a per-layer array of identical values.
fn uniform_u32(md: &Metadata, key: &str) -> Result<Option<u32>, ModelError> {
    match md.get(key) {
        None => Ok(None),
        Some(zinc_gguf::Value::Array(a)) => {
            let vals: Vec<i128> = (0..a.len())
                .filter_map(|i| a.get(i).and_then(|v| v.as_int()))
                .collect();
            match vals.first() {
                Some(&v) if vals.iter().all(|&x| x == v) && vals.len() == a.len() => {
                    Ok(Some(v as u32))
                }
                _ => Err(ModelError::Invalid(format!(
                    "{key}: per-layer values that differ are not supported ({} entries, type {})",
                    a.len(),
                    match a {
                        Array::U32(_) => "u32",
                        Array::I32(_) => "i32",
                        _ => "other",
                    }
                ))),
            }
        }
        Some(_) => Ok(Some(md.get_u32(key)?)),
    }
}

impl HParams {
    pub fn from_metadata(md: &Metadata) -> Result<HParams, ModelError> {
        let arch = md.architecture()?.to_string();
        let k = |s: &str| format!("{arch}.{s}");
        let n_embd = md.get_usize(&k("embedding_length"))?;
        let n_layer = md.get_usize(&k("block_count"))?;
        let n_head = uniform_u32(md, &k("attention.head_count"))?.ok_or_else(|| {
            ModelError::Invalid(format!("{} is missing", k("attention.head_count")))
        })? as usize;
        let n_head_kv =
            uniform_u32(md, &k("attention.head_count_kv"))?.map_or(n_head, |v| v as usize);
        if n_head == 0 || n_head_kv == 0 || !n_head.is_multiple_of(n_head_kv) {
            return Err(ModelError::Invalid(format!(
                "{n_head} query heads cannot share {n_head_kv} KV heads"
            )));
        }
        let head_dim = md
            .opt_usize(&k("attention.key_length"))?
            .unwrap_or(n_embd / n_head);
        if let Some(vd) = md.opt_usize(&k("attention.value_length"))? {
            if vd != head_dim {
                return Err(ModelError::Invalid(format!(
                    "value_length {vd} differs from key_length {head_dim}, which is not supported"
                )));
            }
        }
        let n_ff = uniform_u32(md, &k("feed_forward_length"))?.unwrap_or(0) as usize;
        let n_rot = md
            .opt_usize(&k("rope.dimension_count"))?
            .unwrap_or(head_dim);
        let eps = md.get_f32(&k("attention.layer_norm_rms_epsilon"))?;
        let freq_base = md.opt_f32(&k("rope.freq_base"))?.unwrap_or(10000.0);
        let scaling = md.opt_str(&k("rope.scaling.type"))?.unwrap_or("linear");
        let factor = match md.opt_f32(&k("rope.scaling.factor"))? {
            Some(f) => Some(f),
            None => md.opt_f32(&k("rope.scale_linear"))?,
        };
        let freq_scale = match (scaling, factor) {
            ("none", _) | (_, None) => 1.0,
            (_, Some(f)) if f == 0.0 || f == 1.0 => 1.0,
            ("linear", Some(f)) => 1.0 / f,
            (other, Some(f)) => {
                return Err(ModelError::Invalid(format!(
                    "rope scaling {other:?} (factor {f}) is not supported yet; linear and none are"
                )))
            }
        };
        let n_vocab = md
            .opt_array("tokenizer.ggml.tokens")?
            .map(|a| a.len())
            .or(md.opt_usize(&k("vocab_size"))?)
            .ok_or_else(|| {
                ModelError::Invalid(
                    "the vocabulary size is unknown (no tokenizer.ggml.tokens)".into(),
                )
            })?;
        Ok(HParams {
            n_vocab,
            n_ctx_train: md.opt_usize(&k("context_length"))?.unwrap_or(0),
            n_embd,
            n_layer,
            n_head,
            n_head_kv,
            head_dim,
            n_ff,
            n_rot,
            eps,
            freq_base,
            freq_scale,
            n_expert: md.opt_usize(&k("expert_count"))?.unwrap_or(0),
            n_expert_used: md.opt_usize(&k("expert_used_count"))?.unwrap_or(0),
            arch,
        })
    }

    pub fn key(&self, s: &str) -> String {
        format!("{}.{s}", self.arch)
    }
}
