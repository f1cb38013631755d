//! Writes the tiny random-weight llama, qwen3 and qwen3moe models of `tests/fixtures/tiny/`, the inputs
//! of the logits comparison with llama.cpp (see `tests/fixtures/README.md`).
//!
//!   cargo run --release -p zinc-models --example make_tiny_models -- tests/fixtures/tiny

use std::path::PathBuf;

use zinc_gguf::GgmlType;
use zinc_models::synth::{write_synthetic, SynthSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: make_tiny_models DIR")?,
    );
    let base = SynthSpec {
        arch: "qwen3".into(),
        n_vocab: 512,
        n_embd: 256,
        n_layer: 2,
        n_head: 4,
        n_head_kv: 2,
        head_dim: 64,
        n_ff: 512,
        n_expert: 0,
        n_expert_used: 0,
        weight_type: GgmlType::Q4_K,
        wide_type: GgmlType::Q6_K,
        embd_type: GgmlType::Q8_0,
        fused_gate_up: false,
        expert_scales: false,
        random_blocks: false,
        seed: 20261130,
        n_ctx_train: 4096,
    };
    write_synthetic(&base, &dir.join("qwen3-tiny.gguf"))?;
    let moe = SynthSpec {
        arch: "qwen3moe".into(),
        n_ff: 256,
        n_expert: 4,
        n_expert_used: 2,
        weight_type: GgmlType::Q8_0,
        wide_type: GgmlType::Q5_0,
        embd_type: GgmlType::F16,
        seed: 7,
        ..base.clone()
    };
    write_synthetic(&moe, &dir.join("qwen3moe-tiny.gguf"))?;
    // Per-expert `.scale` tensors (llama.cpp's qwen3moe takes them; it takes no fused gate/up).
    let scaled = SynthSpec {
        expert_scales: true,
        seed: 8,
        ..moe.clone()
    };
    write_synthetic(&scaled, &dir.join("qwen3moe-scaled-tiny.gguf"))?;
    let llama = SynthSpec {
        arch: "llama".into(),
        n_head_kv: 4,
        weight_type: GgmlType::Q4_0,
        wide_type: GgmlType::Q8_0,
        embd_type: GgmlType::Q5_0,
        seed: 99,
        ..base.clone()
    };
    write_synthetic(&llama, &dir.join("llama-tiny.gguf"))?;
    Ok(())
}
