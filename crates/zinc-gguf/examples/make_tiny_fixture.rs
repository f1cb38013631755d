//! Writes `tests/fixtures/gguf/tiny.gguf`: a tiny llama-shaped file of mixed tensor types, the
//! input of the split fixtures (see `tests/fixtures/gguf/README.md`).
//!
//!   cargo run --release -p zinc-gguf --example make_tiny_fixture -- tests/fixtures/gguf/tiny.gguf

use zinc_gguf::{Array, GgmlType, GgufWriter, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .ok_or("usage: make_tiny_fixture OUT.gguf")?;
    let mut w = GgufWriter::new();
    w.set("general.architecture", Value::String("llama".into()))?;
    w.set("general.name", Value::String("zinc tiny fixture".into()))?;
    w.set("llama.block_count", Value::U32(2))?;
    w.set("llama.embedding_length", Value::U32(64))?;
    w.set("llama.feed_forward_length", Value::U32(128))?;
    w.set("llama.attention.head_count", Value::U32(4))?;
    w.set("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5))?;
    w.set("llama.rope.freq_base", Value::F32(10000.0))?;
    w.set("tokenizer.ggml.model", Value::String("gpt2".into()))?;
    let tokens: Vec<String> = (0..32).map(|i| format!("tok{i}")).collect();
    w.set("tokenizer.ggml.tokens", Value::Array(Array::String(tokens)))?;
    w.set(
        "tokenizer.ggml.token_type",
        Value::Array(Array::I32(vec![1; 32])),
    )?;
    let vals: Vec<f32> = (0..64 * 128)
        .map(|i| ((i * 2654435761u64 as usize) % 1024) as f32 / 512.0 - 1.0)
        .collect();
    w.add_f32_tensor(
        "token_embd.weight",
        GgmlType::Q8_0,
        &[64, 32],
        &vals[..64 * 32],
    )?;
    for b in 0..2 {
        w.add_f32_tensor(
            &format!("blk.{b}.attn_norm.weight"),
            GgmlType::F32,
            &[64],
            &vals[..64],
        )?;
        w.add_f32_tensor(
            &format!("blk.{b}.attn_q.weight"),
            GgmlType::Q4_0,
            &[64, 64],
            &vals[..64 * 64],
        )?;
        w.add_f32_tensor(
            &format!("blk.{b}.ffn_up.weight"),
            GgmlType::F16,
            &[64, 128],
            &vals[..64 * 128],
        )?;
    }
    w.add_f32_tensor("output.weight", GgmlType::Q6_K, &[256, 8], &vals[..256 * 8])?;
    w.write_to(&out)?;
    Ok(())
}
