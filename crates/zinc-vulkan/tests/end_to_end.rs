//! The Vulkan backend against the CPU backend on a real model (Gemma 3 270M, Q4_K_M with a
//! Q8_0 embedding of 170 MiB — larger than lavapipe's 128 MiB binding limit): the same greedy
//! tokens, and a greedy step that costs one submit and one 4-byte readback.

use std::sync::Arc;

use zinc_backend::cpu::CpuBackend;
use zinc_backend::Backend;
use zinc_engine::{Engine, GenerateParams, Logits, SamplerConfig};
use zinc_gguf::GgufModel;
use zinc_testdata::{model, TestModel};
use zinc_tokenizer::Tokenizer;
use zinc_vulkan::{VulkanBackend, VulkanOptions};

fn engine<B: Backend + 'static>(b: B, file: &Arc<GgufModel>) -> Engine<B> {
    let tok = Tokenizer::from_metadata(file.metadata()).expect("tokenizer");
    let m = zinc_models::load(&b, file.clone()).expect("model loads");
    Engine::new(b, m, tok)
}

fn greedy<B: Backend>(e: &Engine<B>, prompt: &[u32], n: usize) -> Vec<u32> {
    let mut s = e.session(256);
    let params = GenerateParams {
        max_tokens: n,
        sampler: SamplerConfig::greedy(),
        ignore_eos: true,
        ..Default::default()
    };
    s.generate(prompt, &params, |_| true)
        .expect("generate")
        .tokens
}

fn vulkan() -> VulkanBackend {
    VulkanBackend::new(&VulkanOptions::default()).expect("a Vulkan device (CI installs lavapipe)")
}

/// Greedy tokens agree for 32 tokens, or part only at a near-tie of the CPU's own logits: both
/// backends round activations to 8 bits before each product, so a last-bit difference in a sum
/// (summation order differs) can move one activation by a quantization step now and then.
#[test]
fn greedy_tokens_follow_the_cpu_backend() {
    let file = Arc::new(GgufModel::open(model(TestModel::Gemma3)).expect("open"));
    let cpu = engine(CpuBackend::new(), &file);
    let vk = engine(vulkan(), &file);
    let mut agreed = Vec::new();
    for prompt in [
        "The capital of France is",
        "The history of the printing press begins",
    ] {
        let ids = cpu.tokenizer.encode(prompt, true, false);
        let a = greedy(&cpu, &ids, 32);
        let b = greedy(&vk, &ids, 32);
        let same = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        eprintln!("{prompt:?}: {same} of 32 greedy tokens agree");
        agreed.push(same);
        if same < 32 {
            let mut s = cpu.session(256);
            let mut ctx = ids.clone();
            ctx.extend_from_slice(&a[..same]);
            let l = s
                .eval(&ctx, Logits::Last)
                .expect("eval")
                .pop()
                .expect("logits");
            let gap = l[a[same] as usize] - l[b[same] as usize];
            eprintln!("  they part at token {same}: the CPU's logit gap between the two choices is {gap:.4}");
            assert!(
                gap <= 0.1,
                "{prompt:?} parts at token {same} with a gap of {gap}: not a tie"
            );
        }
    }
}

/// A greedy decode step is one queue submit, and only the token id (4 bytes) comes back — under
/// the validation layer, which must report nothing (the model's 170 MiB embedding exceeds
/// lavapipe's 128 MiB storage-binding limit; device addresses have none).
#[test]
fn a_greedy_step_is_one_submit_and_one_token_id() {
    let file = Arc::new(GgufModel::open(model(TestModel::Gemma3)).expect("open"));
    let validated = VulkanBackend::new(&VulkanOptions {
        validation: true,
        ..Default::default()
    })
    .expect("a Vulkan device with the validation layer (CI installs vulkan-validationlayers)");
    let vk = engine(validated, &file);
    let ids = vk.tokenizer.encode("Once upon a time", true, false);
    let stats = vk.backend.stats();
    let count = |n| {
        let (s0, r0) = (
            stats.submits.load(std::sync::atomic::Ordering::SeqCst),
            stats
                .readback_bytes
                .load(std::sync::atomic::Ordering::SeqCst),
        );
        greedy(&vk, &ids, n);
        (
            stats.submits.load(std::sync::atomic::Ordering::SeqCst) - s0,
            stats
                .readback_bytes
                .load(std::sync::atomic::Ordering::SeqCst)
                - r0,
        )
    };
    let (s1, r1) = count(1);
    let (s9, r9) = count(9);
    eprintln!("1 token: {s1} submits, {r1} bytes back; 9 tokens: {s9} submits, {r9} bytes back");
    assert_eq!(s9 - s1, 8, "eight decode steps, eight submits");
    assert_eq!(r9 - r1, 8 * 4, "eight decode steps, eight token ids");
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
}
