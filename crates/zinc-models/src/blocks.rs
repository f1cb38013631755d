//! Building blocks shared by the family files: a weight loader that accounts for every tensor,
//! the attention block and the FFN block (`ARCHITECTURES.md §2`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;

use zinc_backend::{AttnParams, Backend, GateUp, GatedAct, MoeWeights, RopeParams};
use zinc_gguf::GgufModel;

use crate::{HParams, ModelError};

/// Hands out weights and remembers which tensors were taken, so a model can prove it consumed
/// every tensor of its file.
pub struct Loader<'b, B: Backend> {
    pub b: &'b B,
    pub file: Arc<GgufModel>,
    taken: Mutex<BTreeSet<String>>,
}

impl<'b, B: Backend> Loader<'b, B> {
    pub fn new(b: &'b B, file: Arc<GgufModel>) -> Self {
        Loader {
            b,
            file,
            taken: Mutex::new(BTreeSet::new()),
        }
    }

    fn mark(&self, name: &str) {
        self.taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string());
    }

    /// A tensor the architecture requires; the error names it.
    pub fn req(&self, name: &str) -> Result<B::Weight, ModelError> {
        let w = self.b.weight(&self.file, name)?;
        self.mark(name);
        Ok(w)
    }

    /// A tensor the architecture accepts when present.
    pub fn opt(&self, name: &str) -> Result<Option<B::Weight>, ModelError> {
        if self.file.get(name).is_none() {
            return Ok(None);
        }
        self.req(name).map(Some)
    }

    /// Checks a weight's shape (ggml order).
    pub fn expect_dims(&self, w: &B::Weight, name: &str, dims: &[u64]) -> Result<(), ModelError> {
        let got = self.b.weight_dims(w);
        if got != dims {
            return Err(ModelError::Invalid(format!(
                "tensor {name:?} has shape {got:?}, expected {dims:?}"
            )));
        }
        Ok(())
    }

    /// Fails when the file holds tensors nobody took and that are not on `ignore`.
    pub fn finish(&self, arch: &str, ignore: &[&str]) -> Result<(), ModelError> {
        let taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        let unused: Vec<String> = self
            .file
            .tensors()
            .map(|t| t.info.name.clone())
            .filter(|n| !taken.contains(n) && !ignore.iter().any(|i| n == i || n.ends_with(i)))
            .collect();
        if unused.is_empty() {
            return Ok(());
        }
        let shown: Vec<&str> = unused.iter().take(8).map(String::as_str).collect();
        let more = if unused.len() > 8 {
            format!(" and {} more", unused.len() - 8)
        } else {
            String::new()
        };
        Err(ModelError::UnusedTensors {
            arch: arch.to_string(),
            names: format!("{}{more}", shown.join(", ")),
        })
    }
}

/// A projection with its optional bias and optional scalar `.scale`.
pub struct Linear<B: Backend> {
    pub w: B::Weight,
    pub bias: Option<B::Weight>,
    pub scale: Option<f32>,
}

impl<B: Backend> Linear<B> {
    pub fn load(l: &Loader<B>, base: &str) -> Result<Self, ModelError> {
        let w = l.req(&format!("{base}.weight"))?;
        Self::with_weight(l, base, w)
    }

    fn with_weight(l: &Loader<B>, base: &str, w: B::Weight) -> Result<Self, ModelError> {
        let bias = l.opt(&format!("{base}.bias"))?;
        let scale = match l.opt(&format!("{base}.scale"))? {
            None => None,
            Some(s) => {
                let v = l.b.weight_values(&s);
                match v.as_slice() {
                    [x] => Some(*x),
                    _ => {
                        return Err(ModelError::Invalid(format!(
                            "{base}.scale has {} values, expected 1",
                            v.len()
                        )))
                    }
                }
            }
        };
        Ok(Linear { w, bias, scale })
    }

    pub fn load_opt(l: &Loader<B>, base: &str) -> Result<Option<Self>, ModelError> {
        match l.opt(&format!("{base}.weight"))? {
            None => Ok(None),
            Some(w) => Self::with_weight(l, base, w).map(Some),
        }
    }

    /// `W x (+ b) (· scale)`
    pub fn apply(&self, b: &B, x: &B::Tensor) -> B::Tensor {
        let mut y = b.matmul(&self.w, x);
        if let Some(s) = self.scale {
            b.scale(&mut y, s);
        }
        if let Some(bias) = &self.bias {
            b.add_bias(&mut y, bias);
        }
        y
    }

    /// `acc += W x (+ b) (· scale)`, in one backend step when there is no scale or bias.
    pub fn apply_add(&self, b: &B, x: &B::Tensor, acc: &mut B::Tensor) {
        if self.scale.is_none() && self.bias.is_none() {
            b.matmul_add(&self.w, x, acc);
        } else {
            let y = self.apply(b, x);
            b.add(acc, &y);
        }
    }

    /// `acc += W x (+ b) (· scale)`, then `acc` RMS-normalized by `norm` into a new tensor (the
    /// next block's input), in one backend step when there is no scale or bias.
    pub fn apply_add_norm(
        &self,
        b: &B,
        x: &B::Tensor,
        acc: &mut B::Tensor,
        norm: &B::Weight,
        eps: f32,
    ) -> B::Tensor {
        if self.scale.is_none() && self.bias.is_none() {
            b.matmul_add_norm(&self.w, x, acc, norm, eps)
        } else {
            self.apply_add(b, x, acc);
            b.rms_norm_into(acc, norm, eps)
        }
    }

    /// Output width (`dims[1]`).
    pub fn rows(&self, b: &B) -> u64 {
        b.weight_dims(&self.w).get(1).copied().unwrap_or(1)
    }
}

/// Q, K and V projections: separate, or one fused `attn_qkv` split by columns.
pub enum Qkv<B: Backend> {
    Separate {
        q: Linear<B>,
        k: Linear<B>,
        v: Linear<B>,
    },
    Fused(Linear<B>),
}

/// Self-attention weights of one layer.
pub struct Attention<B: Backend> {
    pub qkv: Qkv<B>,
    pub o: Linear<B>,
    pub q_norm: Option<B::Weight>,
    pub k_norm: Option<B::Weight>,
}

impl<B: Backend> Attention<B> {
    pub fn load(l: &Loader<B>, hp: &HParams, i: usize) -> Result<Self, ModelError> {
        let p = format!("blk.{i}");
        let (q_w, kv_w) = (
            (hp.n_head * hp.head_dim) as u64,
            (hp.n_head_kv * hp.head_dim) as u64,
        );
        let qkv = match Linear::load_opt(l, &format!("{p}.attn_qkv"))? {
            Some(f) => {
                if f.rows(l.b) != q_w + 2 * kv_w {
                    return Err(ModelError::Invalid(format!(
                        "{p}.attn_qkv has {} outputs, expected {}",
                        f.rows(l.b),
                        q_w + 2 * kv_w
                    )));
                }
                Qkv::Fused(f)
            }
            None => {
                let q = Linear::load(l, &format!("{p}.attn_q"))?;
                let k = Linear::load(l, &format!("{p}.attn_k"))?;
                let v = Linear::load(l, &format!("{p}.attn_v"))?;
                l.expect_dims(
                    &q.w,
                    &format!("{p}.attn_q.weight"),
                    &[hp.n_embd as u64, q_w],
                )?;
                l.expect_dims(
                    &k.w,
                    &format!("{p}.attn_k.weight"),
                    &[hp.n_embd as u64, kv_w],
                )?;
                l.expect_dims(
                    &v.w,
                    &format!("{p}.attn_v.weight"),
                    &[hp.n_embd as u64, kv_w],
                )?;
                Qkv::Separate { q, k, v }
            }
        };
        Ok(Attention {
            qkv,
            o: Linear::load(l, &format!("{p}.attn_output"))?,
            q_norm: l.opt(&format!("{p}.attn_q_norm.weight"))?,
            k_norm: l.opt(&format!("{p}.attn_k_norm.weight"))?,
        })
    }

    /// Projects `h` to Q, K, V, applies the Q/K norms and RoPE, stores K/V and attends (the
    /// output before the out-projection `o`). `q_scale` pre-scales Q (Gemma 3); the attention
    /// kernel applies `attn.scale`.
    #[allow(clippy::too_many_arguments)]
    pub fn attend(
        &self,
        b: &B,
        h: &B::Tensor,
        cache: &mut B::KvCache,
        layer: usize,
        positions: &[u32],
        hp: &HParams,
        rope: &RopeParams,
        attn: &AttnParams,
        eps: f32,
        q_scale: Option<f32>,
    ) -> Result<B::Tensor, ModelError> {
        let (q, k, v) = match &self.qkv {
            Qkv::Separate { q, k, v } => (q.apply(b, h), k.apply(b, h), v.apply(b, h)),
            Qkv::Fused(f) => {
                let all = f.apply(b, h);
                let mut parts = b.split_cols(
                    &all,
                    &[
                        hp.n_head * hp.head_dim,
                        hp.n_head_kv * hp.head_dim,
                        hp.n_head_kv * hp.head_dim,
                    ],
                );
                let v = parts.pop().expect("three parts");
                let k = parts.pop().expect("three parts");
                let q = parts.pop().expect("three parts");
                (q, k, v)
            }
        };
        let norms = (self.q_norm.as_ref(), self.k_norm.as_ref());
        Ok(b.prep_attention(
            q, k, &v, norms, eps, positions, rope, cache, layer, attn, q_scale,
        )?)
    }
}

/// A gated feed-forward block: `down(act(gate x) ⊙ up x)`.
pub struct GatedFfn<B: Backend> {
    pub gate: Linear<B>,
    pub up: Linear<B>,
    pub down: Linear<B>,
}

impl<B: Backend> GatedFfn<B> {
    pub fn load(l: &Loader<B>, i: usize) -> Result<Self, ModelError> {
        let p = format!("blk.{i}");
        Ok(GatedFfn {
            gate: Linear::load(l, &format!("{p}.ffn_gate"))?,
            up: Linear::load(l, &format!("{p}.ffn_up"))?,
            down: Linear::load(l, &format!("{p}.ffn_down"))?,
        })
    }

    /// `act(gate h) ⊙ up h`: the input of the down-projection.
    fn inner(&self, b: &B, h: &B::Tensor, act: GatedAct) -> B::Tensor {
        let plain = |l: &Linear<B>| l.scale.is_none() && l.bias.is_none();
        if plain(&self.gate) && plain(&self.up) {
            return b.gate_up_act(&self.gate.w, &self.up.w, h, act);
        }
        let g = self.gate.apply(b, h);
        let u = self.up.apply(b, h);
        b.gated(&g, &u, act)
    }

    pub fn forward(&self, b: &B, h: &B::Tensor, act: GatedAct) -> B::Tensor {
        self.down.apply(b, &self.inner(b, h, act))
    }

    /// `x += forward(…)` (the residual folded into the down-projection), then `x`
    /// RMS-normalized by `norm` into a new tensor (the next block's input; see
    /// `Linear::apply_add_norm`).
    pub fn forward_add_norm(
        &self,
        b: &B,
        h: &B::Tensor,
        act: GatedAct,
        x: &mut B::Tensor,
        norm: &B::Weight,
        eps: f32,
    ) -> B::Tensor {
        self.down
            .apply_add_norm(b, &self.inner(b, h, act), x, norm, eps)
    }
}

/// A mixture-of-experts block with softmax routing and renormalised top-k weights.
pub struct MoeFfn<B: Backend> {
    pub router: B::Weight,
    /// Gate and up, or one fused `ffn_gate_up_exps` (gate rows first).
    pub gate: Option<B::Weight>,
    pub up: Option<B::Weight>,
    pub gate_up: Option<B::Weight>,
    pub down: B::Weight,
    /// `ffn_{gate,up,down}_exps.scale`: one factor per expert.
    pub scales: [Option<Vec<f32>>; 3],
    pub k: usize,
}

impl<B: Backend> MoeFfn<B> {
    pub fn load(l: &Loader<B>, hp: &HParams, i: usize) -> Result<Self, ModelError> {
        let p = format!("blk.{i}");
        if hp.n_expert == 0 || hp.n_expert_used == 0 || hp.n_expert_used > hp.n_expert {
            return Err(ModelError::Invalid(format!(
                "a MoE layer needs 0 < expert_used_count ({}) ≤ expert_count ({})",
                hp.n_expert_used, hp.n_expert
            )));
        }
        let gate_up = l.opt(&format!("{p}.ffn_gate_up_exps.weight"))?;
        let (gate, up) = if gate_up.is_some() {
            (None, None)
        } else {
            (
                Some(l.req(&format!("{p}.ffn_gate_exps.weight"))?),
                Some(l.req(&format!("{p}.ffn_up_exps.weight"))?),
            )
        };
        let scale = |name: &str| -> Result<Option<Vec<f32>>, ModelError> {
            match l.opt(&format!("{p}.{name}.scale"))? {
                None => Ok(None),
                Some(w) => {
                    let v = l.b.weight_values(&w);
                    if v.len() != hp.n_expert {
                        return Err(ModelError::Invalid(format!(
                            "{p}.{name}.scale has {} values, expected one per expert ({})",
                            v.len(),
                            hp.n_expert
                        )));
                    }
                    Ok(Some(v))
                }
            }
        };
        let (gs, us) = if gate_up.is_some() {
            let s = scale("ffn_gate_up_exps")?;
            (s.clone(), s)
        } else {
            (scale("ffn_gate_exps")?, scale("ffn_up_exps")?)
        };
        Ok(MoeFfn {
            router: l.req(&format!("{p}.ffn_gate_inp.weight"))?,
            gate,
            up,
            gate_up,
            down: l.req(&format!("{p}.ffn_down_exps.weight"))?,
            scales: [gs, us, scale("ffn_down_exps")?],
            k: hp.n_expert_used,
        })
    }

    /// `acc += ` the FFN of `h` (the residual connection), then `acc` RMS-normalized by `norm`
    /// into a new tensor.
    pub fn forward_add_norm(
        &self,
        b: &B,
        h: &B::Tensor,
        act: GatedAct,
        acc: &mut B::Tensor,
        norm: &B::Weight,
        eps: f32,
    ) -> B::Tensor {
        b.moe_ffn_add_norm(h, &self.weights(act), acc, norm, eps)
    }

    fn weights(&self, act: GatedAct) -> MoeWeights<'_, B::Weight> {
        let gate_up = match (&self.gate_up, &self.gate, &self.up) {
            (Some(gu), _, _) => GateUp::Fused(gu),
            (None, Some(gate), Some(up)) => GateUp::Separate { gate, up },
            _ => unreachable!("load takes either the fused or both separate weights"),
        };
        MoeWeights {
            router: &self.router,
            gate_up,
            down: &self.down,
            scales: [
                self.scales[0].as_deref(),
                self.scales[1].as_deref(),
                self.scales[2].as_deref(),
            ],
            k: self.k,
            renorm: true,
            act,
        }
    }
}

/// The output head: final norm, then the LM head (tied to the embedding when `output` is absent).
pub struct Head<B: Backend> {
    pub norm: B::Weight,
    pub output: Linear<B>,
}

impl<B: Backend> Head<B> {
    pub fn load(l: &Loader<B>, hp: &HParams) -> Result<Self, ModelError> {
        let norm = l.req("output_norm.weight")?;
        let output = match Linear::load_opt(l, "output")? {
            Some(o) => o,
            None => Linear {
                w: l.req("token_embd.weight")?,
                bias: None,
                scale: None,
            },
        };
        l.expect_dims(
            &output.w,
            "output.weight",
            &[hp.n_embd as u64, hp.n_vocab as u64],
        )?;
        Ok(Head { norm, output })
    }

    /// Logits of the listed rows of `h`, the residual stream already normalized by `norm`
    /// (a decoder that fused the final norm into its last block).
    pub fn forward_normed(&self, b: &B, h: &B::Tensor, rows: &[usize]) -> B::Tensor {
        if rows.is_empty() {
            let n_vocab = b.weight_dims(&self.output.w).get(1).copied().unwrap_or(0) as usize;
            return b.tensor(0, n_vocab);
        }
        let all = rows.len() == b.shape(h).0 && rows.iter().enumerate().all(|(i, &r)| i == r);
        if all {
            self.output.apply(b, h)
        } else {
            self.output.apply(b, &b.select_rows(h, rows))
        }
    }

    /// Logits of the listed token rows (none: an empty tensor, and no work).
    pub fn forward(&self, b: &B, x: &B::Tensor, rows: &[usize], eps: f32) -> B::Tensor {
        if rows.is_empty() {
            let n_vocab = b.weight_dims(&self.output.w).get(1).copied().unwrap_or(0) as usize;
            return b.tensor(0, n_vocab);
        }
        // Every row, in order (a decode step): normed straight into a new tensor, which a
        // backend may quantize for the output projection as it writes it.
        let all = rows.len() == b.shape(x).0 && rows.iter().enumerate().all(|(i, &r)| i == r);
        let x = if all {
            b.rms_norm_into(x, &self.norm, eps)
        } else {
            let mut x = b.select_rows(x, rows);
            b.rms_norm(&mut x, &self.norm, eps);
            x
        };
        self.output.apply(b, &x)
    }
}

/// `RMSNorm(x) · w` into a new tensor.
pub fn normed<B: Backend>(b: &B, x: &B::Tensor, w: &B::Weight, eps: f32) -> B::Tensor {
    b.rms_norm_into(x, w, eps)
}
