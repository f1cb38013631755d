//! Synthetic models: GGUF files in real architectures' shapes with seeded random weights, for
//! tests (tiny qwen3 / qwen3moe models checked against llama.cpp) and for benchmarks of shapes
//! whose real weights cannot be downloaded here.
//!
//! The vocabulary is a byte-level BPE one (every byte a token, ChatML specials, filler tokens up
//! to `n_vocab`) so llama.cpp loads the files too.

use std::path::Path;

use zinc_gguf::{Array, GgmlType, GgufError, GgufWriter, Value};

/// The shape and formats of a synthetic model.
#[derive(Clone, Debug)]
pub struct SynthSpec {
    /// `llama` (no Q/K norms), `qwen3` or `qwen3moe`.
    pub arch: String,
    pub n_vocab: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_head_kv: usize,
    pub head_dim: usize,
    /// Dense FFN width (qwen3) or per-expert width (qwen3moe).
    pub n_ff: usize,
    pub n_expert: usize,
    pub n_expert_used: usize,
    /// Type of the attention and FFN matrices.
    pub weight_type: GgmlType,
    /// Type of `attn_v`, `ffn_down` and `output` (Q6_K in a q4_k_m file).
    pub wide_type: GgmlType,
    pub embd_type: GgmlType,
    /// MoE: one fused `ffn_gate_up_exps` instead of separate gate and up tensors.
    pub fused_gate_up: bool,
    /// MoE: per-expert `.scale` tensors on the expert projections.
    pub expert_scales: bool,
    pub seed: u64,
}

/// xorshift64*: a tiny, dependency-free, reproducible generator.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // Uniform in [-1, 1).
        ((v >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn byte_chars() -> Vec<String> {
    let mut next = 256u32;
    (0..256u32)
        .map(|b| {
            let printable =
                (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
            let c = if printable {
                b
            } else {
                next += 1;
                next - 1
            };
            char::from_u32(c).map(String::from).unwrap_or_default()
        })
        .collect()
}

/// Writes the model described by `spec` to `path`.
pub fn write_synthetic(spec: &SynthSpec, path: &Path) -> Result<(), GgufError> {
    let mut w = GgufWriter::new();
    let a = spec.arch.as_str();
    let k = |s: &str| format!("{a}.{s}");
    w.set("general.architecture", Value::String(a.into()))?;
    w.set("general.name", Value::String(format!("zinc synthetic {a}")))?;
    w.set(&k("context_length"), Value::U32(4096))?;
    w.set(&k("embedding_length"), Value::U32(spec.n_embd as u32))?;
    w.set(&k("block_count"), Value::U32(spec.n_layer as u32))?;
    w.set(&k("feed_forward_length"), Value::U32(spec.n_ff as u32))?;
    w.set(&k("attention.head_count"), Value::U32(spec.n_head as u32))?;
    w.set(
        &k("attention.head_count_kv"),
        Value::U32(spec.n_head_kv as u32),
    )?;
    w.set(&k("attention.key_length"), Value::U32(spec.head_dim as u32))?;
    w.set(
        &k("attention.value_length"),
        Value::U32(spec.head_dim as u32),
    )?;
    w.set(&k("attention.layer_norm_rms_epsilon"), Value::F32(1e-6))?;
    w.set(&k("rope.freq_base"), Value::F32(1_000_000.0))?;
    if a == "llama" {
        w.set(&k("rope.dimension_count"), Value::U32(spec.head_dim as u32))?;
        w.set(&k("vocab_size"), Value::U32(spec.n_vocab as u32))?;
    }
    let moe = spec.n_expert > 0;
    if moe {
        w.set(&k("expert_count"), Value::U32(spec.n_expert as u32))?;
        w.set(
            &k("expert_used_count"),
            Value::U32(spec.n_expert_used as u32),
        )?;
        w.set(
            &k("expert_feed_forward_length"),
            Value::U32(spec.n_ff as u32),
        )?;
    }
    // Vocabulary: bytes, ChatML specials, filler.
    let mut tokens = byte_chars();
    let mut types = vec![1i32; 256];
    for s in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] {
        tokens.push(s.into());
        types.push(3);
    }
    while tokens.len() < spec.n_vocab {
        tokens.push(format!("[filler{}]", tokens.len()));
        types.push(4);
    }
    let eos = 256u32;
    w.set("tokenizer.ggml.model", Value::String("gpt2".into()))?;
    w.set("tokenizer.ggml.pre", Value::String("qwen2".into()))?;
    w.set("tokenizer.ggml.tokens", Value::Array(Array::String(tokens)))?;
    w.set("tokenizer.ggml.token_type", Value::Array(Array::I32(types)))?;
    w.set(
        "tokenizer.ggml.merges",
        Value::Array(Array::String(vec!["Ġ t".into(), "h e".into()])),
    )?;
    w.set("tokenizer.ggml.eos_token_id", Value::U32(eos))?;
    w.set("tokenizer.ggml.bos_token_id", Value::U32(eos))?;
    w.set("tokenizer.ggml.add_bos_token", Value::Bool(false))?;

    let mut rng = Rng(spec.seed | 1);
    let mut add = |w: &mut GgufWriter,
                   name: &str,
                   ty: GgmlType,
                   dims: &[u64],
                   scale: f32,
                   offset: f32|
     -> Result<(), GgufError> {
        let n: u64 = dims.iter().product();
        let vals: Vec<f32> = (0..n).map(|_| offset + scale * rng.next_f32()).collect();
        w.add_f32_tensor(name, ty, dims, &vals).map(|_| ())
    };
    let (e, v, f) = (spec.n_embd as u64, spec.n_vocab as u64, spec.n_ff as u64);
    let (q, kv) = (
        (spec.n_head * spec.head_dim) as u64,
        (spec.n_head_kv * spec.head_dim) as u64,
    );
    let s_in = |fan_in: u64| 1.7 / (fan_in as f32).sqrt();
    add(
        &mut w,
        "token_embd.weight",
        spec.embd_type,
        &[e, v],
        1.0,
        0.0,
    )?;
    add(&mut w, "output_norm.weight", GgmlType::F32, &[e], 0.1, 1.0)?;
    add(
        &mut w,
        "output.weight",
        spec.wide_type,
        &[e, v],
        s_in(e),
        0.0,
    )?;
    for i in 0..spec.n_layer {
        let p = format!("blk.{i}");
        add(
            &mut w,
            &format!("{p}.attn_norm.weight"),
            GgmlType::F32,
            &[e],
            0.1,
            1.0,
        )?;
        add(
            &mut w,
            &format!("{p}.attn_q.weight"),
            spec.weight_type,
            &[e, q],
            s_in(e),
            0.0,
        )?;
        add(
            &mut w,
            &format!("{p}.attn_k.weight"),
            spec.weight_type,
            &[e, kv],
            s_in(e),
            0.0,
        )?;
        add(
            &mut w,
            &format!("{p}.attn_v.weight"),
            spec.wide_type,
            &[e, kv],
            s_in(e),
            0.0,
        )?;
        add(
            &mut w,
            &format!("{p}.attn_output.weight"),
            spec.weight_type,
            &[q, e],
            s_in(q),
            0.0,
        )?;
        if a != "llama" {
            add(
                &mut w,
                &format!("{p}.attn_q_norm.weight"),
                GgmlType::F32,
                &[spec.head_dim as u64],
                0.1,
                1.0,
            )?;
            add(
                &mut w,
                &format!("{p}.attn_k_norm.weight"),
                GgmlType::F32,
                &[spec.head_dim as u64],
                0.1,
                1.0,
            )?;
        }
        add(
            &mut w,
            &format!("{p}.ffn_norm.weight"),
            GgmlType::F32,
            &[e],
            0.1,
            1.0,
        )?;
        if moe {
            let n = spec.n_expert as u64;
            add(
                &mut w,
                &format!("{p}.ffn_gate_inp.weight"),
                GgmlType::F32,
                &[e, n],
                s_in(e),
                0.0,
            )?;
            if spec.fused_gate_up {
                add(
                    &mut w,
                    &format!("{p}.ffn_gate_up_exps.weight"),
                    spec.weight_type,
                    &[e, 2 * f, n],
                    s_in(e),
                    0.0,
                )?;
            } else {
                add(
                    &mut w,
                    &format!("{p}.ffn_gate_exps.weight"),
                    spec.weight_type,
                    &[e, f, n],
                    s_in(e),
                    0.0,
                )?;
                add(
                    &mut w,
                    &format!("{p}.ffn_up_exps.weight"),
                    spec.weight_type,
                    &[e, f, n],
                    s_in(e),
                    0.0,
                )?;
            }
            add(
                &mut w,
                &format!("{p}.ffn_down_exps.weight"),
                spec.wide_type,
                &[f, e, n],
                s_in(f),
                0.0,
            )?;
            if spec.expert_scales {
                let first = if spec.fused_gate_up {
                    "ffn_gate_up_exps"
                } else {
                    "ffn_gate_exps"
                };
                add(
                    &mut w,
                    &format!("{p}.{first}.scale"),
                    GgmlType::F32,
                    &[n],
                    0.3,
                    1.0,
                )?;
                add(
                    &mut w,
                    &format!("{p}.ffn_down_exps.scale"),
                    GgmlType::F32,
                    &[n],
                    0.3,
                    1.0,
                )?;
            }
        } else {
            add(
                &mut w,
                &format!("{p}.ffn_gate.weight"),
                spec.weight_type,
                &[e, f],
                s_in(e),
                0.0,
            )?;
            add(
                &mut w,
                &format!("{p}.ffn_up.weight"),
                spec.weight_type,
                &[e, f],
                s_in(e),
                0.0,
            )?;
            add(
                &mut w,
                &format!("{p}.ffn_down.weight"),
                spec.wide_type,
                &[f, e],
                s_in(f),
                0.0,
            )?;
        }
    }
    w.write_to(path)
}
