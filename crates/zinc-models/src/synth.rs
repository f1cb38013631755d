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
    /// Quantized tensors as random blocks with finite scales, generated while the file is
    /// written (no quantization, no copy in memory): how full-size benchmark models are made.
    /// Otherwise random f32 values are quantized (small test models that llama.cpp checks).
    pub random_blocks: bool,
    /// `context_length`: the training context the file declares.
    pub n_ctx_train: usize,
}

/// Full-size shapes of released models, for benchmarks (`zinc synth --preset`).
pub fn preset(name: &str) -> Option<SynthSpec> {
    let base = |arch: &str, n_embd, n_layer, n_head, n_head_kv, n_ff| SynthSpec {
        arch: arch.into(),
        n_vocab: 151_936,
        n_embd,
        n_layer,
        n_head,
        n_head_kv,
        head_dim: 128,
        n_ff,
        n_expert: 0,
        n_expert_used: 0,
        weight_type: GgmlType::Q4_K,
        wide_type: GgmlType::Q6_K,
        embd_type: GgmlType::Q4_K,
        fused_gate_up: false,
        expert_scales: false,
        seed: 42,
        random_blocks: true,
        // Qwen3's released files declare 40,960 tokens.
        n_ctx_train: 40_960,
    };
    Some(match name {
        "qwen3-0.6b" => base("qwen3", 1024, 28, 16, 8, 3072),
        "qwen3-8b" => base("qwen3", 4096, 36, 32, 8, 12288),
        "qwen3-30b-a3b" => SynthSpec {
            n_expert: 128,
            n_expert_used: 8,
            ..base("qwen3moe", 2048, 48, 32, 4, 768)
        },
        _ => return None,
    })
}

/// The preset names [`preset`] knows.
pub const PRESETS: &[&str] = &["qwen3-0.6b", "qwen3-8b", "qwen3-30b-a3b"];

/// Sets a file type's formats: `q4_k_m` is Q4_K everywhere except Q6_K for `attn_v`,
/// `ffn_down` and `output`; `q8_0` and `f16` use one type throughout.
pub fn apply_file_type(spec: &mut SynthSpec, file_type: &str) -> Option<()> {
    let (w, wide, embd) = match file_type {
        "q4_k_m" => (GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_K),
        "q8_0" => (GgmlType::Q8_0, GgmlType::Q8_0, GgmlType::Q8_0),
        "q4_0" => (GgmlType::Q4_0, GgmlType::Q4_0, GgmlType::Q4_0),
        "f16" => (GgmlType::F16, GgmlType::F16, GgmlType::F16),
        _ => return None,
    };
    spec.weight_type = w;
    spec.wide_type = wide;
    spec.embd_type = embd;
    Some(())
}

/// The bytes of every f16 scale within a block of `ty` (set finite; the rest stays random).
fn scale_offsets(ty: GgmlType) -> &'static [usize] {
    use GgmlType as T;
    match ty {
        T::Q4_0 | T::Q5_0 | T::Q8_0 | T::IQ4_NL | T::Q4_1 | T::Q5_1 => &[0],
        T::Q2_K => &[80, 82],
        T::Q3_K => &[108],
        T::Q4_K | T::Q5_K => &[0, 2],
        T::Q6_K => &[208],
        T::IQ4_XS => &[0],
        _ => &[],
    }
}

/// Fills `buf` with random blocks of `ty` whose f16 scales are small finite values.
fn random_blocks(ty: GgmlType, seed: u64, buf: &mut [u8]) {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    for chunk in buf.chunks_mut(8) {
        let v = next().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    let bs = ty.type_size();
    match ty {
        GgmlType::F16 => {
            for h in buf.chunks_exact_mut(2) {
                let v = (next() >> 40) as f32 / (1u64 << 24) as f32 * 0.02 - 0.01;
                h.copy_from_slice(&half::f16::from_f32(v).to_le_bytes());
            }
        }
        _ => {
            let offs = scale_offsets(ty);
            for block in buf.chunks_exact_mut(bs) {
                for &o in offs {
                    // 2^-10 .. 2^-7: small, finite, never subnormal.
                    let v = half::f16::from_f32(1.0 / (128 << (next() % 4)) as f32);
                    block[o..o + 2].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
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
    // llama.cpp's llama_ftype for the presets' mixes (other engines label the file by it).
    let file_type = match (spec.weight_type, spec.wide_type) {
        (GgmlType::Q4_K, GgmlType::Q6_K) => Some(15), // MOSTLY_Q4_K_M
        (GgmlType::Q8_0, GgmlType::Q8_0) => Some(7),
        (GgmlType::Q4_0, GgmlType::Q4_0) => Some(2),
        (GgmlType::F16, GgmlType::F16) => Some(1),
        _ => None,
    };
    if let Some(ft) = file_type {
        w.set("general.file_type", Value::U32(ft))?;
    }
    w.set(&k("context_length"), Value::U32(spec.n_ctx_train as u32))?;
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
    let mut count = 0u64;
    let mut add = |w: &mut GgufWriter,
                   name: &str,
                   ty: GgmlType,
                   dims: &[u64],
                   scale: f32,
                   offset: f32|
     -> Result<(), GgufError> {
        count += 1;
        if spec.random_blocks && ty != GgmlType::F32 {
            let seed = spec.seed ^ count.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let fill = move |buf: &mut [u8]| random_blocks(ty, seed, buf);
            return w
                .add_tensor_generated(name, ty, dims, Box::new(fill))
                .map(|_| ());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The file type is written as llama.cpp numbers it (llama_ftype), so its tools label the
    /// file by its mix instead of guessing.
    #[test]
    fn synthetic_files_carry_their_llama_ftype() {
        let dir = std::env::temp_dir().join(format!("zinc-synth-ft-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (ty, want) in [
            ("q4_k_m", Some(15i128)),
            ("q8_0", Some(7)),
            ("f16", Some(1)),
        ] {
            let mut spec = preset("qwen3-0.6b").unwrap();
            spec.n_vocab = 256;
            spec.n_embd = 256;
            spec.n_layer = 1;
            spec.n_ff = 256;
            apply_file_type(&mut spec, ty).unwrap();
            let path = dir.join(format!("{ty}.gguf"));
            write_synthetic(&spec, &path).unwrap();
            let m = zinc_gguf::GgufModel::open(&path).unwrap();
            let got = m
                .metadata()
                .get("general.file_type")
                .and_then(|v| v.as_int());
            assert_eq!(got, want, "{ty}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
