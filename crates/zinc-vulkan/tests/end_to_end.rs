//! The Vulkan backend against the CPU backend on a real model (Gemma 3 270M, Q4_K_M with a
//! Q8_0 embedding of 170 MiB — larger than lavapipe's 128 MiB binding limit): the same greedy
//! tokens, and a greedy step that costs one submit and one 4-byte readback.

use std::sync::Arc;

use zinc_backend::cpu::CpuBackend;
use zinc_backend::Backend;
use zinc_engine::{Engine, GenerateParams, Logits, SamplerConfig};
use zinc_gguf::{GgmlType, GgufModel};
use zinc_testdata::{model, TestModel};
use zinc_tokenizer::Tokenizer;
use zinc_vulkan::{VulkanBackend, VulkanOptions};

fn engine<B: Backend + 'static>(b: B, file: &Arc<GgufModel>) -> Engine<B> {
    let tok = Tokenizer::from_metadata(file.metadata()).expect("tokenizer");
    let m = zinc_models::load(&b, file.clone()).expect("model loads");
    Engine::new(b, m, tok)
}

/// A Vulkan engine on `file` with `opts` and the validation layer on.
fn validated(opts: VulkanOptions, file: &Arc<GgufModel>) -> Engine<VulkanBackend> {
    let b = VulkanBackend::new(&VulkanOptions {
        validation: true,
        ..opts
    })
    .expect("a Vulkan device (CI installs lavapipe)");
    engine(b, file)
}

/// Dispatches a profiling Vulkan engine has recorded of the kernels (profile labels) `which`
/// takes.
fn kernel_calls(e: &Engine<VulkanBackend>, which: impl Fn(&str) -> bool) -> u64 {
    let report = e.backend.profile_report().expect("a profile");
    report
        .iter()
        .filter(|(n, _, _)| which(n))
        .map(|(_, _, c)| c)
        .sum()
}

/// The shaders (profile labels) a profiling Vulkan engine has run.
fn kernels_run(e: &Engine<VulkanBackend>) -> Vec<String> {
    e.backend
        .profile_report()
        .expect("a profile")
        .into_iter()
        .map(|(name, _, _)| name)
        .collect()
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

/// The logits before each token of `cont`, decoding one token at a time after `prompt` (the
/// decode path, teacher-forced: both backends see the same tokens).
fn forced<B: Backend>(e: &Engine<B>, prompt: &[u32], cont: &[u32]) -> Vec<Vec<f32>> {
    let mut s = e.session(256);
    let last = |v: Vec<Vec<f32>>| v.into_iter().next_back().expect("logits");
    let mut out = vec![last(s.eval(prompt, Logits::Last).expect("eval"))];
    for &t in &cont[..cont.len() - 1] {
        out.push(last(s.eval(&[t], Logits::Last).expect("eval")));
    }
    out
}

/// A two-layer synthetic Qwen3 with `n_embd`-wide rows, FFNs of `n_ff`, two query heads on one KV
/// head, a 1,024-token vocabulary and deterministic blocks (Q4_K/Q6_K at these widths).
fn small_qwen3(n_embd: usize, n_ff: usize) -> zinc_models::synth::SynthSpec {
    let mut spec = zinc_models::synth::preset("qwen3-0.6b").expect("preset");
    spec.n_vocab = 1024;
    spec.n_embd = n_embd;
    spec.n_layer = 2;
    spec.n_head = 2;
    spec.n_head_kv = 1;
    spec.n_ff = n_ff;
    spec.random_blocks = false;
    spec
}

/// `small_qwen3(n_embd, n_ff)` as a Qwen3-MoE of `experts` experts (of `n_ff` rows), `used` a
/// token, written to a fresh temporary folder named after `what`: the folder (for the caller to
/// remove), the spec and the open file.
fn small_qwen3_moe(
    what: &str,
    (n_embd, n_ff): (usize, usize),
    (experts, used): (usize, usize),
) -> (
    std::path::PathBuf,
    zinc_models::synth::SynthSpec,
    Arc<GgufModel>,
) {
    let dir = std::env::temp_dir().join(format!("zinc-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(n_embd, n_ff);
    spec.arch = "qwen3moe".into();
    spec.n_expert = experts;
    spec.n_expert_used = used;
    let path = dir.join(format!("qwen3moe-{n_embd}-{n_ff}-{experts}.gguf"));
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    let file = Arc::new(GgufModel::open(&path).expect("open"));
    (dir, spec, file)
}

fn argmax(v: &[f32]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b })
}

/// Along the CPU's greedy continuation (32 tokens, decoded one at a time on both backends), the
/// Vulkan backend picks the CPU's token at every step, except at a near-tie of the CPU's own
/// logits (a gap of at most 0.25). The quantized products are bit-identical (integer dots on
/// the same 8-bit activations), but transcendentals (exp in softmax and SiLU, sin/cos) differ
/// in the last bits, and the f16 KV cache and 8-bit activation rounding can turn that into a
/// rounding step now and then — measured on lavapipe: logits up to 0.57 apart (RMS over the
/// vocabulary), 4 of 64 steps picking another token at CPU gaps of 0.002–0.24.
/// Free-running greedy decoding would compound one such tie into a different text, so each
/// step is judged on the same context.
#[test]
fn greedy_tokens_follow_the_cpu_backend() {
    let file = Arc::new(GgufModel::open(model(TestModel::Gemma3)).expect("open"));
    let cpu = engine(CpuBackend::new(), &file);
    let vk = engine(vulkan(), &file);
    let mut failures = Vec::new();
    for prompt in [
        "The capital of France is",
        "The history of the printing press begins",
    ] {
        let ids = cpu.tokenizer.encode(prompt, true, false);
        let a = greedy(&cpu, &ids, 32);
        let lc = forced(&cpu, &ids, &a);
        let lv = forced(&vk, &ids, &a);
        let mut same = 0;
        let mut worst_rms = 0.0f64;
        for (i, (c, v)) in lc.iter().zip(&lv).enumerate() {
            assert_eq!(
                argmax(c),
                a[i] as usize,
                "the CPU's own greedy token at step {i}"
            );
            let rms = (c
                .iter()
                .zip(v)
                .map(|(x, y)| ((x - y) as f64).powi(2))
                .sum::<f64>()
                / c.len() as f64)
                .sqrt();
            worst_rms = worst_rms.max(rms);
            let pick = argmax(v);
            if pick == a[i] as usize {
                same += 1;
            } else {
                let gap = c[a[i] as usize] - c[pick];
                eprintln!(
                    "  step {i}: vulkan picks {pick}, the CPU {}; CPU gap {gap:.4}",
                    a[i]
                );
                if gap > 0.25 {
                    failures.push(format!("{prompt:?} step {i}: gap {gap} is not a tie"));
                }
            }
        }
        eprintln!(
            "{prompt:?}: {same} of 32 steps pick the CPU's token; worst logits RMS {worst_rms:.4}"
        );
        if worst_rms > 1.0 {
            failures.push(format!("{prompt:?}: logits RMS {worst_rms} apart"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A greedy decode step is one host round trip (one submit waited for; its commands may reach
/// the queue in several pieces before it), and only the token id (4 bytes) comes back — under
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

/// Small synthetic Qwen3 and Qwen3-MoE models (256-wide rows of Q4_K/Q6_K, 2 layers; the MoE
/// with fused gate-up experts and per-expert scales) decoded on the kernels a GPU gets — the
/// K-quant decode mat-vec (`matvec_dec.comp`), for the MoE's experts too (the profile names
/// them) — and the same device with that kernel off (`matvecq.comp`, `moe_matvecq.comp`),
/// both against the CPU backend: the logits of every step agree within 5% of their RMS, with
/// the pre-norms fused into the residual mat-vecs (matvec_dec.comp's FUSE). (Not
/// held to each other: on this token sequence matvec_dec's logits move from step 11 on by
/// ~1–2% while `matvecq` matches the CPU to 1e-5, though every mat-vec agrees with `matvecq` to
/// ~1e-6 and another sequence shows no such step — most likely one key a last bit away, from
/// another summation order, rounding to another f16 in the cache.)
#[test]
fn gpu_decode_kernels_follow_the_cpu_on_kquant_models() {
    let dir = std::env::temp_dir().join(format!("zinc-kquant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    let dist = |a: &[f32], b: &[f32]| {
        let d: Vec<f32> = a.iter().zip(b).map(|(x, y)| x - y).collect();
        ms(&d).sqrt()
    };
    for moe in [false, true] {
        let mut spec = small_qwen3(256, 512);
        if moe {
            spec.arch = "qwen3moe".into();
            spec.n_ff = 256;
            // More picks than matvec_dec's combining form has groups of lanes (8): two
            // groups take a second slot.
            spec.n_expert = 12;
            spec.n_expert_used = 10;
            spec.fused_gate_up = true;
            spec.expert_scales = true;
        }
        let arch = spec.arch.clone();
        let path = dir.join(format!("{arch}-256.gguf"));
        zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
        let file = Arc::new(GgufModel::open(&path).expect("open"));
        let gpu = |lanes: u32, rows: u32, pieces: Option<u32>, fused_down: bool| {
            let b = VulkanBackend::new(&VulkanOptions {
                threads_per_row: Some(16),
                // Attention in the CPU's arithmetic: what differs from the CPU is then the
                // mat-vecs' summation order.
                cpu_attention: Some(true),
                decode_kquant: Some((lanes, rows, 128)),
                decode_pieces: pieces,
                moe_fused_down: Some(fused_down),
                // The experts at the lanes of the dense weights (the combining form then takes
                // the shape given, not its own default).
                moe_lanes: Some((lanes.max(8), lanes.max(8))),
                // The pre-norms fused into the residual mat-vecs (off by default).
                fuse_norm: Some(true),
                profile: true,
                ..Default::default()
            })
            .expect("a Vulkan device (CI installs lavapipe)");
            engine(b, &file)
        };
        let cpu = engine(CpuBackend::new(), &file);
        // The MoE model also decodes with the experts' down-projection and weighted sum in one
        // dispatch (matvec_dec's combining form), the second time with 3 rows a workgroup and 4
        // pieces a lane over groups of 16 lanes (wider than lavapipe's subgroups).
        let (dec, generic) = (gpu(32, 1, None, false), gpu(0, 1, None, false));
        let (fused, fused2) = (gpu(32, 1, None, moe), gpu(16, 3, Some(4), moe));
        let prompt = [17u32, 300, 5, 911];
        let cont: Vec<u32> = (0..12).map(|i| (i * 97 + 13) % 1024).collect();
        let lc = forced(&cpu, &prompt, &cont);
        let ld = forced(&dec, &prompt, &cont);
        let lg = forced(&generic, &prompt, &cont);
        let lf = forced(&fused, &prompt, &cont);
        let lf2 = forced(&fused2, &prompt, &cont);
        assert_eq!(lc.len(), ld.len());
        for (i, (((c, d), g), (f, f2))) in lc
            .iter()
            .zip(&ld)
            .zip(&lg)
            .zip(lf.iter().zip(&lf2))
            .enumerate()
        {
            let scale = ms(c).sqrt();
            let (cd, cg, cf, cf2) = (dist(c, d), dist(c, g), dist(c, f), dist(c, f2));
            eprintln!(
                "{arch} step {i}: logits RMS {scale:.3}; CPU vs GPU {cd:.5}, vs GPU without matvec_dec {cg:.5}, vs fused down {cf:.5} / {cf2:.5}"
            );
            assert!(
                cf2 < 0.05 * scale,
                "{arch} step {i}: the fused down-projection at 16 lanes × 3 rows is {cf2} from the CPU"
            );
            assert!(
                cd < 0.05 * scale,
                "{arch} step {i}: the GPU kernels are {cd} from the CPU"
            );
            assert!(
                cg < 0.05 * scale,
                "{arch} step {i}: the generic kernels are {cg} from the CPU"
            );
            assert!(
                cf < 0.05 * scale,
                "{arch} step {i}: the fused down-projection is {cf} from the CPU"
            );
        }
        if moe {
            let ran = kernels_run(&fused);
            assert!(
                ran.iter().any(|n| n.starts_with("moe_down_combined")),
                "no moe_down_combined among the kernels that ran: {ran:?}"
            );
            assert!(
                !ran.iter().any(|n| n.starts_with("moe_combine")),
                "moe_combine ran beside the fused down-projection: {ran:?}"
            );
            // Decode steps route in the router's mat-vec (matvec.comp's ROUTE).
            assert!(
                ran.iter().any(|n| n == "router_routed") && !ran.iter().any(|n| n == "moe_route"),
                "the router did not route: {ran:?}"
            );
            let ran2 = kernels_run(&fused2);
            assert!(
                ran2.iter().any(|n| n.starts_with("moe_down_combined")),
                "no moe_down_combined at 16 lanes × 3 rows: {ran2:?}"
            );
        }
        // Every residual add hands on the next pre-norm, computed in the mat-vec (FUSE): of a
        // step's five norms (two a layer, the head's) only the first layer's runs on its own.
        let fusing = if moe { &fused } else { &dec };
        let norms: u64 = fusing
            .backend
            .profile_report()
            .expect("a profile")
            .iter()
            .filter(|(name, _, _)| name == "norm_quant" || name == "rms_norm")
            .map(|(_, _, n)| n)
            .sum();
        // (`forced` evaluates the prompt and then all but the last continuation token.)
        assert!(
            norms as usize <= cont.len(),
            "{arch}: {norms} norm dispatches in {} steps: the fused norms did not run",
            cont.len()
        );
        let ran = kernels_run(&dec);
        let want = if moe {
            "moe_matvec_dec"
        } else {
            "matvec_dec_Q4_K"
        };
        assert!(
            ran.iter().any(|n| n.starts_with(want)),
            "{arch}: no {want} among the kernels that ran: {ran:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Early weights (`VulkanOptions::early_weights`): at decode steps the mat-vecs that read a
/// producer's output — q/k/v beside the pre-norm (norm_quant.comp, or the previous
/// down-projection's fused norm), the out-projection beside the attention, the gate/up beside
/// the FFN's pre-norm, the output head beside the final norm — are recorded with no barrier,
/// each waiting in the shader for its producer's signal (sync.glsl) and reading its input from
/// shared memory: the same arithmetic, so the same bits as with the barriers, at every decode
/// step of a synthetic Qwen3 on the K-quant decode mat-vec, with the pre-norms fused into the
/// residual mat-vecs and not, after a prompt of one slice of keys and one of several (where the
/// attention does not quantize its output and the out-projection does not wait), with a
/// dependent stage fewer a step for each consumer that waits. On lavapipe the producer has
/// always finished when its consumers start (a queue's dispatches run one after another): this
/// holds the slots, epochs and staging (a consumer that saw no signal writes NaN) and the
/// kernels' arithmetic; the concurrency is the H200 selftest's.
#[test]
fn early_weights_give_the_same_logits() {
    let dir = std::env::temp_dir().join(format!("zinc-early-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(256, 512);
    spec.n_head = 4;
    spec.n_head_kv = 2;
    let path = dir.join("qwen3-early.gguf");
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    let file = Arc::new(GgufModel::open(&path).expect("open"));
    let layers = spec.n_layer as u64;
    let cont: Vec<u32> = (0..8).map(|i| (i * 89 + 5) % 1024).collect();
    for fuse_norm in [false, true] {
        let gpu = |early: bool| {
            validated(
                VulkanOptions {
                    threads_per_row: Some(16),
                    cpu_attention: Some(false),
                    // The K-quant decode mat-vec at a GPU's shape (lavapipe's own is off).
                    decode_kquant: Some((32, 1, 128)),
                    fuse_norm: Some(fuse_norm),
                    early_weights: Some(early),
                    // The attention's output in Q8_K blocks either way (the waiting
                    // out-projection reads no chunks of 32): the same arithmetic on and off.
                    attn_x32: Some(false),
                    // Each eval's stages are its own step's: none recorded ahead.
                    step_ahead: Some(false),
                    ..Default::default()
                },
                &file,
            )
        };
        // A layer's q/k/v, out-projection and gate/up, and the head; at the long prompt the
        // out-projection reads an attention that did not quantize its output, and waits not.
        for (prompt_len, fewer) in [(4usize, 3 * layers + 1), (150, 2 * layers + 1)] {
            let what = format!("fuse_norm {fuse_norm}, prompt {prompt_len}");
            let prompt: Vec<u32> = (0..prompt_len as u32)
                .map(|i| (i * 37 + 11) % 1024)
                .collect();
            let (on, off) = (gpu(true), gpu(false));
            let stages = |e: &Engine<VulkanBackend>| e.backend.dependent_stages().expect("counted");
            let mut s_on = on.session(256);
            let mut s_off = off.session(256);
            let last = |v: Vec<Vec<f32>>| v.into_iter().next_back().expect("logits");
            let a = last(s_on.eval(&prompt, Logits::Last).expect("eval"));
            let b = last(s_off.eval(&prompt, Logits::Last).expect("eval"));
            assert_eq!(a, b, "{what}: the prompt's logits differ");
            for (i, &t) in cont.iter().enumerate() {
                let (c_on, c_off) = (stages(&on), stages(&off));
                let a = last(s_on.eval(&[t], Logits::Last).expect("eval"));
                let b = last(s_off.eval(&[t], Logits::Last).expect("eval"));
                assert!(
                    a.iter().all(|v| v.is_finite()),
                    "{what}, step {i}: a consumer saw no signal"
                );
                assert!(
                    a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{what}, step {i}: the logits differ with early weights"
                );
                let (d_on, d_off) = (stages(&on) - c_on, stages(&off) - c_off);
                assert_eq!(
                    d_on + fewer,
                    d_off,
                    "{what}, step {i}: {d_on} dependent stages with early weights, {d_off} without"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The decode attention doing the q/k norms, RoPE and K/V store itself (`fuse_prep`, on by
/// default: attn_dec_prep) against qk_prep.comp before attn_dec: the same logits at every decode
/// step of a synthetic Qwen3 (q/k norms, 4 query heads over 2 KV heads) but for the compilers'
/// freedom to contract a product and a sum differently in the two kernels (within 10⁻³ of the
/// logits' RMS), from a short prompt (one slice of keys) and a long one (several, the new key in
/// the last), a layer's qk_prep left to the prompt's rows; both within 5% of the CPU. Then Gemma
/// 3 (head dimension 256, the queries pre-scaled, windowed layers) on the real 270M file, every
/// decode layer on attn_dec_prep, as close to the CPU as the separate path (see there).
#[test]
fn the_decode_attention_preparing_its_inputs_gives_the_same_logits() {
    let dir = std::env::temp_dir().join(format!("zinc-prep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(256, 512);
    spec.n_head = 4;
    spec.n_head_kv = 2;
    let path = dir.join("qwen3-prep.gguf");
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    let file = Arc::new(GgufModel::open(&path).expect("open"));
    let cpu = engine(CpuBackend::new(), &file);
    let gpu = |prep: bool| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                // The decode attention on attn_dec.comp at every length.
                cpu_attention: Some(false),
                fuse_prep: Some(prep),
                // The prompt's q/k prep on qk_prep.comp, whose calls are counted below.
                prep_rows: Some(false),
                profile: true,
                ..Default::default()
            },
            &file,
        )
    };
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    let cont: Vec<u32> = (0..8).map(|i| (i * 97 + 13) % 1024).collect();
    for prompt_len in [4usize, 150] {
        let prompt: Vec<u32> = (0..prompt_len as u32)
            .map(|i| (i * 31 + 7) % 1024)
            .collect();
        let (on, off) = (gpu(true), gpu(false));
        let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
        let lc = forced(&cpu, &prompt, &cont);
        let dist = |a: &[f32], b: &[f32]| {
            let d: Vec<f32> = a.iter().zip(b).map(|(x, y)| x - y).collect();
            ms(&d).sqrt()
        };
        for (i, ((a, b), c)) in l_on.iter().zip(&l_off).zip(&lc).enumerate() {
            assert!(
                dist(a, b) <= 1e-3 * ms(b).sqrt(),
                "prompt {prompt_len}, step {i}: the logits are {} apart with the attention preparing its inputs",
                dist(a, b)
            );
            let d: Vec<f32> = a.iter().zip(c).map(|(x, y)| x - y).collect();
            assert!(
                ms(&d).sqrt() < 0.05 * ms(c).sqrt(),
                "prompt {prompt_len}, step {i}: {} from the CPU",
                ms(&d).sqrt()
            );
        }
        // `forced` evaluates the prompt, then all but the last continuation token one at a time.
        let steps = (cont.len() - 1) as u64;
        let layers = spec.n_layer as u64;
        // (A label's first word names its kernel: the one-pass attention is "attn_prep one-pass".)
        let calls = |e: &Engine<VulkanBackend>, k: &str| {
            kernel_calls(e, |n| n.split(' ').next() == Some(k))
        };
        assert_eq!(
            (calls(&on, "attn_prep"), calls(&on, "qk_prep")),
            (layers * steps, layers),
            "prompt {prompt_len}: the attention did not prepare its inputs at every decode step"
        );
        assert_eq!(
            (calls(&off, "attn_prep"), calls(&off, "qk_prep")),
            (0, layers * (steps + 1)),
            "prompt {prompt_len}: qk_prep without fuse_prep"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Gemma 3 (its queries pre-scaled after RoPE, its local layers windowed), along the CPU's
    // greedy continuation: the fused path as close to the CPU as the separate path — within the
    // greedy test's 1.0 (RMS) at every step, and no further on average than 1.5× the separate
    // path's distance. Not the same bits: on lavapipe the two agree to the bit at many steps,
    // but a norm's double-float sum, added in another order, rounds to the other f32 now and
    // then, and Gemma's 18 layers grow that step to ~0.2 (the separate path's own distance
    // from the CPU).
    let file = Arc::new(GgufModel::open(model(TestModel::Gemma3)).expect("open"));
    let gemma = |prep: bool| {
        let b = VulkanBackend::new(&VulkanOptions {
            cpu_attention: Some(false),
            fuse_prep: Some(prep),
            profile: true,
            ..Default::default()
        })
        .expect("a Vulkan device (CI installs lavapipe)");
        engine(b, &file)
    };
    let cpu = engine(CpuBackend::new(), &file);
    let (on, off) = (gemma(true), gemma(false));
    let ids = cpu
        .tokenizer
        .encode("The capital of France is", true, false);
    let cont = greedy(&cpu, &ids, 16);
    let (l_on, l_off) = (forced(&on, &ids, &cont), forced(&off, &ids, &cont));
    let lc = forced(&cpu, &ids, &cont);
    let dist = |a: &[f32], b: &[f32]| {
        let d: Vec<f32> = a.iter().zip(b).map(|(x, y)| x - y).collect();
        ms(&d).sqrt()
    };
    let (mut fused, mut separate) = (0.0, 0.0);
    for (i, ((a, b), c)) in l_on.iter().zip(&l_off).zip(&lc).enumerate() {
        let (d, dc, ds) = (dist(a, b), dist(a, c), dist(b, c));
        eprintln!(
            "Gemma 3 step {i}: fused against separate {d:.5}; against the CPU fused {dc:.5}, separate {ds:.5}"
        );
        assert!(
            dc <= 1.0,
            "Gemma 3 step {i}: the fused path's logits are {dc} from the CPU's"
        );
        (fused, separate) = (fused + dc, separate + ds);
    }
    assert!(
        fused <= 1.5 * separate,
        "Gemma 3: the fused path is {fused} from the CPU over the steps, the separate {separate}"
    );
    let layers = file
        .metadata()
        .get_usize("gemma3.block_count")
        .expect("block count") as u64;
    assert_eq!(
        kernel_calls(&on, |n| n.split(' ').next() == Some("attn_prep")),
        layers * (cont.len() - 1) as u64,
        "Gemma 3: the attention did not prepare its inputs at every decode step"
    );
}

/// The MoE router that normalizes its own input beside the pre-norm (matvec.comp's SN, on by
/// default) against the same device with it off (the router reading the norm's output a stage
/// later): the same logits bit for bit at every decode step of a synthetic Qwen3-MoE (2,048-wide
/// rows as the 30B-A3B's, 2 layers), each step one dependent stage fewer a layer (the 4-token
/// prompt's too), and both within 5% of the CPU. At 64 threads a row (GPUs' default: each lane
/// eight of the 256-wide norm's values, its one chain; on lavapipe's subgroups of 8 a row's eight
/// subgroups meet through shared memory), 16 (four chains a lane, of eight values each, over four
/// batches of loads) and 8 with a 512-wide norm (within one subgroup, sixteen chains); at 64 and
/// 16 also in router workgroups of 128 invocations (two and eight rows a workgroup).
#[test]
fn an_moe_router_beside_its_norm_gives_the_same_bits() {
    let (dir, spec, file) = small_qwen3_moe("router-norm", (2048, 256), (12, 4));
    let cpu = engine(CpuBackend::new(), &file);
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..8).map(|i| (i * 97 + 13) % 1024).collect();
    let lc = forced(&cpu, &prompt, &cont);
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    // The router's workgroups of 64 invocations and, at 64 and 16 threads a row, of 128.
    let configs = [
        (64, None, 64),
        (16, None, 64),
        (8, Some(512), 64),
        (64, None, 128),
        (16, None, 128),
    ];
    for (tpr, norm_wg, router_wg) in configs {
        let gpu = |beside: bool| {
            validated(
                VulkanOptions {
                    threads_per_row: Some(tpr),
                    router_norm: Some(beside),
                    decode_norm_wg: norm_wg,
                    router_wg: Some(router_wg),
                    // Stages counted step by step: none recorded ahead (which would count the
                    // step after the last as well).
                    step_ahead: Some(false),
                    ..Default::default()
                },
                &file,
            )
        };
        let (on, off) = (gpu(true), gpu(false));
        let stages = |e: &Engine<VulkanBackend>| e.backend.dependent_stages().expect("counted");
        let (s_on, s_off) = (stages(&on), stages(&off));
        let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
        // The prompt of 4 tokens too: decode norms take up to 4 rows.
        let steps = cont.len() as u64;
        let (d_on, d_off) = (stages(&on) - s_on, stages(&off) - s_off);
        assert_eq!(
            d_off - d_on,
            steps * spec.n_layer as u64,
            "{tpr} threads a row, norm workgroup {norm_wg:?}, router workgroup {router_wg}: \
             {d_on} dependent stages with the router beside its norm, {d_off} without, over \
             {steps} steps"
        );
        for (i, ((a, b), c)) in l_on.iter().zip(&l_off).zip(&lc).enumerate() {
            let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(
                same,
                "{tpr} threads a row, norm workgroup {norm_wg:?}, router workgroup {router_wg}: \
                 step {i} differs"
            );
            let d: Vec<f32> = a.iter().zip(c).map(|(x, y)| x - y).collect();
            let (dist, scale) = (ms(&d).sqrt(), ms(c).sqrt());
            assert!(
                dist < 0.05 * scale,
                "step {i}: {dist} from the CPU (RMS {scale})"
            );
        }
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A prompt's MoE router (f32 rows) taking `matvec_tokens` tokens a workgroup column together
/// (matvec.comp's NT with V4) against one token a column: a synthetic Qwen3-MoE (1,024-wide
/// rows, 16 experts, 4 a token) over prompts of 13 tokens (a last column of 5 at 8 a column, of
/// 1 at 3) and 16, at 16 lanes a row and at 4: every position's logits the same bit for bit,
/// and within 5% of the CPU's; the profile shows the router ran as `matvec_tokens_F32`, and
/// one token a column did not.
#[test]
fn a_prompt_router_taking_tokens_together_gives_the_same_bits() {
    let (dir, _, file) = small_qwen3_moe("router-tokens", (1024, 256), (16, 4));
    let cpu = engine(CpuBackend::new(), &file);
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    let all =
        |e: &Engine<VulkanBackend>, p: &[u32]| e.session(64).eval(p, Logits::All).expect("eval");
    for n in [13usize, 16] {
        let prompt: Vec<u32> = (0..n as u32).map(|i| (i * 131 + 7) % 1024).collect();
        let lc = cpu.session(64).eval(&prompt, Logits::All).expect("eval");
        for tpr in [16, 4] {
            let gpu = |tokens: u32| {
                validated(
                    VulkanOptions {
                        threads_per_row: Some(tpr),
                        matvec_tokens: Some(tokens),
                        profile: true,
                        ..Default::default()
                    },
                    &file,
                )
            };
            let one = gpu(1);
            let base = all(&one, &prompt);
            let ran =
                |e: &Engine<VulkanBackend>| kernel_calls(e, |k| k.starts_with("matvec_tokens_F32"));
            assert_eq!(ran(&one), 0, "one token a column: {:?}", kernels_run(&one));
            for tokens in [8, 3] {
                let e = gpu(tokens);
                let got = all(&e, &prompt);
                assert!(ran(&e) > 0, "{tokens} tokens: {:?}", kernels_run(&e));
                for (i, ((a, b), c)) in got.iter().zip(&base).zip(&lc).enumerate() {
                    let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
                    assert!(
                        same,
                        "{n} tokens, {tpr} lanes a row, {tokens} a column: position {i} \
                         differs from one a column"
                    );
                    let d: Vec<f32> = a.iter().zip(c).map(|(x, y)| x - y).collect();
                    let (dist, scale) = (ms(&d).sqrt(), ms(c).sqrt());
                    assert!(
                        dist < 0.05 * scale,
                        "{n} tokens, position {i}: {dist} from the CPU (RMS {scale})"
                    );
                }
            }
        }
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The router that normalizes its own input recorded before the norm it runs beside
/// (`router_first`, the default: the norm's dispatch held back until the next command) against
/// after it: the same logits bit for bit at every step of a synthetic Qwen3-MoE (2,048-wide rows,
/// 2 layers) and the same dependent stages; and the kernels' clock's log names the stage's
/// commands in the order asked (`router_routed + norm_quant` on, the other way off).
#[test]
fn an_moe_router_recorded_before_its_norm_gives_the_same_bits() {
    let (dir, _, file) = small_qwen3_moe("router-first", (2048, 256), (12, 4));
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..6).map(|i| (i * 97 + 13) % 1024).collect();
    let gpu = |first: bool, clock: bool| {
        validated(
            VulkanOptions {
                threads_per_row: Some(64),
                router_wg: Some(128),
                router_first: Some(first),
                clock,
                ..Default::default()
            },
            &file,
        )
    };
    let (on, off) = (gpu(true, false), gpu(false, false));
    let stages = |e: &Engine<VulkanBackend>| e.backend.dependent_stages().expect("counted");
    let (s_on, s_off) = (stages(&on), stages(&off));
    let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
    assert_eq!(stages(&on) - s_on, stages(&off) - s_off, "dependent stages");
    for (i, (a, b)) in l_on.iter().zip(&l_off).enumerate() {
        assert!(
            a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "step {i} differs with the router recorded first"
        );
    }
    for first in [true, false] {
        let e = gpu(first, true);
        let mut s = e.session(64);
        s.eval(&prompt, Logits::Last).expect("prompt");
        e.backend.clock_step().expect("drained"); // the prompt's records let go
        s.eval(&cont[..1], Logits::Last).expect("step");
        let step = e.backend.clock_step().expect("read").expect("clocked");
        let labels: Vec<&str> = step.stages.iter().map(|s| s.label.as_str()).collect();
        let (want, not) = ("router_routed + norm_quant", "norm_quant + router_routed");
        let (want, not) = if first { (want, not) } else { (not, want) };
        assert!(
            labels.contains(&want) && !labels.contains(&not),
            "router first {first}: {labels:?}"
        );
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A decode step's q and k (both Q4_K, reading the norm's one quantization) in one dispatch of
/// matvec_dec.comp's TWO form (`decode_two`, the default) against a dispatch each: the same
/// logits bit for bit at every step of a synthetic Qwen3 (q 512 rows, k 128, v 128, all Q4_K),
/// at one and two rows a group of lanes, and the same dependent stages; the profile names the
/// joined dispatch (640 rows) at every decode step's layers, where the q's own went. (The
/// prompt's 4 tokens keep a dispatch each, and v, Q6_K here, its own.)
#[test]
fn q_and_k_in_one_dispatch_give_the_same_bits() {
    let (dir, file) = x32_model("two", GgmlType::Q4_K);
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..6).map(|i| (i * 97 + 13) % 1024).collect();
    for nr in [1, 2] {
        let gpu = |two: bool| {
            validated(
                VulkanOptions {
                    threads_per_row: Some(16),
                    cpu_attention: Some(false),
                    decode_kquant: Some((32, nr, 128)),
                    decode_two: Some(two),
                    profile: true,
                    ..Default::default()
                },
                &file,
            )
        };
        let (on, off) = (gpu(true), gpu(false));
        let stages = |e: &Engine<VulkanBackend>| e.backend.dependent_stages().expect("counted");
        let (s_on, s_off) = (stages(&on), stages(&off));
        let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
        assert_eq!(
            stages(&on) - s_on,
            stages(&off) - s_off,
            "{nr} rows: dependent stages"
        );
        for (i, (a, b)) in l_on.iter().zip(&l_off).enumerate() {
            assert!(
                a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{nr} rows a group: step {i} differs with q and k in one dispatch"
            );
        }
        // The prompt's 4 tokens keep a dispatch each; every decode step's layers join theirs.
        let joined =
            |e: &Engine<VulkanBackend>| kernel_calls(e, |n| n == "matvec_dec_Q4_K 640×256");
        let q = |e: &Engine<VulkanBackend>| kernel_calls(e, |n| n == "matvec_dec_Q4_K 512×256");
        let layers = file
            .metadata()
            .get_usize("qwen3.block_count")
            .expect("layers") as u64;
        let steps = (cont.len() - 1) as u64 * layers;
        assert_eq!(
            (joined(&on), q(&off) - q(&on), joined(&off)),
            (steps, steps, 0),
            "{nr} rows a group: {:?}",
            kernels_run(&on)
        );
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An output head of 65,536 Q6_K rows on `matvec_dec.comp` at GPUs' shape (`decode_kquant`
/// 32x1x128, which leaves heads two rows a group of lanes from `DEC_HEAD_ROWS` up, every other
/// Q6_K weight one) and at one row (`decode_q6k` given): a synthetic Qwen3 with a 65,536-token
/// vocabulary decodes within 5% of the CPU's logits at every step both ways, the head on
/// `matvec_dec` (the profile names it).
#[test]
fn a_wide_output_head_at_two_rows_a_group_follows_the_cpu() {
    let dir = std::env::temp_dir().join(format!("zinc-head-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(256, 512);
    spec.n_vocab = 65536;
    let path = dir.join("qwen3-vocab-65536.gguf");
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    let file = Arc::new(GgufModel::open(&path).expect("open"));
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..6).map(|i| (i * 9973 + 13) % 65536).collect();
    let lc = forced(&engine(CpuBackend::new(), &file), &prompt, &cont);
    for q6k in [None, Some((32, 1, 128))] {
        let e = validated(
            VulkanOptions {
                threads_per_row: Some(16),
                decode_kquant: Some((32, 1, 128)),
                decode_q6k: q6k,
                profile: true,
                ..Default::default()
            },
            &file,
        );
        let lv = forced(&e, &prompt, &cont);
        let head = kernel_calls(&e, |n| n.starts_with("matvec_dec_Q6_K 65536×"));
        assert!(
            head > 0,
            "{q6k:?}: the head did not run on matvec_dec: {:?}",
            kernels_run(&e)
        );
        for (i, (a, c)) in lv.iter().zip(&lc).enumerate() {
            let d: Vec<f32> = a.iter().zip(c).map(|(x, y)| x - y).collect();
            let (dist, scale) = (ms(&d).sqrt(), ms(c).sqrt());
            assert!(
                dist < 0.05 * scale,
                "{q6k:?}, step {i}: {dist} from the CPU (RMS {scale})"
            );
        }
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// MoE routing's small ranking (route.glsl's `route_small`, up to 128 experts) gives the
/// general ranking's picks and weights bit for bit: a synthetic Qwen3-MoE (96 experts, 8 a
/// token; and 12, 4 a token) decoded both ways, with the router's mat-vec routing (its profile
/// shows it ran) and with `moe_route.comp`, has the same logits at every step, the prompt's
/// too; and so does the router that routes in workgroups of 128 (an expert an invocation).
#[test]
fn moe_routing_ranks_the_same_either_way() {
    let prompt = [17u32, 300, 5, 911, 40];
    let cont: Vec<u32> = (0..6).map(|i| (i * 97 + 13) % 1024).collect();
    // More experts than 64 (an invocation's second expert in the small ranking counts), and
    // fewer (none has a second).
    for (experts, used) in [(96, 8), (12, 4)] {
        let (dir, _, file) = small_qwen3_moe("route-rank", (256, 256), (experts, used));
        let gpu = |routes: bool, general: bool, router_wg: u32, profile: bool| {
            validated(
                VulkanOptions {
                    threads_per_row: Some(64),
                    router_routes: Some(routes),
                    route_general: general,
                    router_wg: Some(router_wg),
                    profile,
                    ..Default::default()
                },
                &file,
            )
        };
        for (routes, router_wg) in [(true, 64), (false, 64), (true, 128)] {
            let e = gpu(routes, false, router_wg, routes);
            let small = forced(&e, &prompt, &cont);
            if routes {
                // The decode steps' router routed (else both would be moe_route's alike).
                let ran = kernels_run(&e);
                assert!(ran.iter().any(|n| n == "router_routed"), "{ran:?}");
            }
            let general = forced(&gpu(routes, true, 64, false), &prompt, &cont);
            for (i, (a, b)) in small.iter().zip(&general).enumerate() {
                assert!(
                    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{experts} experts, router routes {routes}, workgroup {router_wg}: step {i} \
                     differs between the rankings"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
}

/// The MoE experts' mat-vecs at any lanes a group of rows (`VulkanOptions::moe_lanes`; the
/// default 16 for gate and up, and for the down 64 invocations over its slots: 8 lanes at 8
/// experts a token, 16 at 3) add the same integer dots in another order. Synthetic Qwen3-MoEs
/// with the 30B-A3B's expert widths in small (1,024-wide rows, experts of 768: gate and up rows
/// of 4 Q4_K blocks, down rows of 3 Q6_K blocks), 16 experts with 8 a token and 12 with 3 (groups
/// of lanes idle in the down's workgroup), on `matvec_dec.comp`'s MoE forms (the profile shows
/// they ran, the activation in the gate and up's tail, and again with the gate and up
/// quantizing their own rows, `glu_rows`, but at 64 lanes): at the default, at 8x16 in
/// workgroups of 64 (`moe_wg`, the tail's), 64x64, and 16x32 in workgroups of 256 the logits
/// stay within 1% of their RMS of the same form's at 32x32 at every step (float rounding, which
/// now and then tips an 8-bit activation or an f16 key to its neighbour: up to 0.5% measured on
/// lavapipe by the sixth step), and in the tail within 5% of
/// the CPU's; at least one setting differs from 32x32 in its bits (the option takes effect). A
/// slot dropped at 8 lanes moves them by a tenth of their RMS.
#[test]
fn moe_expert_lanes_change_only_the_rounding() {
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..6).map(|i| (i * 97 + 13) % 1024).collect();
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    for (experts, used) in [(16, 8), (12, 3)] {
        let (dir, _, file) = small_qwen3_moe("moe-lanes", (1024, 768), (experts, used));
        let cpu = engine(CpuBackend::new(), &file);
        let lc = forced(&cpu, &prompt, &cont);
        let gpu = |lanes: Option<(u32, u32)>, wg: Option<u32>, rows: bool| {
            validated(
                VulkanOptions {
                    threads_per_row: Some(16),
                    decode_kquant: Some((32, 1, 128)),
                    moe_lanes: lanes,
                    moe_wg: wg,
                    glu_rows: Some(rows),
                    profile: true,
                    ..Default::default()
                },
                &file,
            )
        };
        let mut moved = 0;
        let settings = [
            (None, None),
            (Some((8, 16)), Some(64)),
            (Some((64, 64)), None),
            (Some((16, 32)), Some(256)),
        ];
        // Both forms of the gate/up: the tail, and quantizing their own rows (`glu_rows`,
        // the default, in workgroups of 32 × the lanes: not at 64 lanes, where the tail would
        // take over, nor in `moe_wg`'s workgroups, which are the tail's).
        let forms = settings.iter().map(|&s| (s, false));
        let forms = forms.chain(
            settings
                .iter()
                .filter(|s| s.0 != Some((64, 64)))
                .map(|&s| (s, true)),
        );
        let base =
            [false, true].map(|rows| forced(&gpu(Some((32, 32)), None, rows), &prompt, &cont));
        // The experts' gate/up dispatches of each tail setting: the own rows take half.
        let mut tail_calls = std::collections::HashMap::new();
        for ((lanes, wg), rows) in forms {
            let base = &base[rows as usize];
            let e = gpu(lanes, wg, rows);
            let got = forced(&e, &prompt, &cont);
            // The experts' kernels ran, the activation in the gate/up's tail or their own.
            let ran = kernels_run(&e);
            for k in ["moe_matvec_dec", "moe_down_combined"] {
                assert!(ran.iter().any(|n| n.starts_with(k)), "{lanes:?}: {ran:?}");
            }
            assert!(!ran.iter().any(|n| n == "glu_quant"), "{lanes:?}: {ran:?}");
            let gate_up = kernel_calls(&e, |n| n.starts_with("moe_matvec_dec"));
            if rows {
                assert_eq!(
                    2 * gate_up,
                    tail_calls[&lanes],
                    "{lanes:?}: the own rows did not run"
                );
            } else {
                tail_calls.insert(lanes, gate_up);
            }
            for (i, ((a, b), c)) in got.iter().zip(base).zip(&lc).enumerate() {
                moved += a.iter().zip(b).any(|(x, y)| x.to_bits() != y.to_bits()) as usize;
                let d: Vec<f32> = a.iter().zip(b).map(|(x, y)| x - y).collect();
                let (dist, scale) = (ms(&d).sqrt(), ms(b).sqrt());
                assert!(
                    dist < 1e-2 * scale,
                    "{experts} experts, {used} a token, lanes {lanes:?}, own rows {rows}, step \
                     {i}: {dist} from 32 lanes' logits (RMS {scale})"
                );
                // (The own rows round the activation in chunks of 32, the CPU in 256-blocks: at
                // 3 of 12 experts the last prompt token's second-layer router has a near-tie,
                // 0.297 against 0.301, that the two roundings break differently, so the form is
                // held to the CPU in `gate_and_up_quantizing_their_own_rows_follow_the_tail`,
                // at 8 of 16, and here to its own 32x32.)
                if rows {
                    continue;
                }
                let d: Vec<f32> = a.iter().zip(c).map(|(x, y)| x - y).collect();
                let (dist, scale) = (ms(&d).sqrt(), ms(c).sqrt());
                assert!(
                    dist < 0.05 * scale,
                    "{experts} experts, {used} a token, lanes {lanes:?}, step {i}: {dist} from \
                     the CPU (RMS {scale})"
                );
            }
        }
        assert!(
            moved > 0,
            "{experts} experts, {used} a token: every lane setting gave 32x32's bits"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
}

/// The MoE experts' mat-vecs issuing several passes' loads before their math
/// (`VulkanOptions::moe_passes`) add the same products in the same order: a pass past a row's
/// end reads a block of the row and adds nothing. A synthetic Qwen3-MoE with the 30B-A3B's
/// expert widths in small (16 experts, 8 a token: gate and up rows of 4 Q4_K blocks, down rows
/// of 3 Q6_K blocks, so every setting has passes past the end) decodes to the default's very
/// bits with the gate/up at 2 or 4 passes and the down at 2 or 4, on `matvec_dec.comp`'s MoE
/// forms (the profile shows they ran).
#[test]
fn moe_expert_passes_keep_the_bits() {
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..4).map(|i| (i * 97 + 13) % 1024).collect();
    let (dir, _, file) = small_qwen3_moe("moe-passes", (1024, 768), (16, 8));
    let gpu = |passes: Option<(u32, u32)>| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                decode_kquant: Some((32, 1, 128)),
                moe_passes: passes,
                profile: true,
                ..Default::default()
            },
            &file,
        )
    };
    let base = forced(&gpu(None), &prompt, &cont);
    for passes in [(2, 4), (4, 2)] {
        let e = gpu(Some(passes));
        let got = forced(&e, &prompt, &cont);
        let ran = kernels_run(&e);
        for k in ["moe_matvec_dec", "moe_down_combined"] {
            assert!(ran.iter().any(|n| n.starts_with(k)), "{passes:?}: {ran:?}");
        }
        for (i, (a, b)) in got.iter().zip(&base).enumerate() {
            let same = a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same, "passes {passes:?}, step {i}: not the default's bits");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
}

/// The gate and up in one dispatch that quantizes its own rows' activation
/// (`VulkanOptions::glu_rows`, matvec_dec.comp's GROWS, the down reading each 32-element chunk's
/// own scale, X32, in each of its K-quant paths: Q6_K and Q4_K downs, on pairs and not): a
/// synthetic Qwen3 (1,024-wide rows, an FFN of 768) and a Qwen3-MoE with those widths (16 experts, 8 a token; expert scales and a fused gate-up tensor in a second
/// MoE) decode within 3% of the RMS of the two-dispatch tail's logits at every step (the
/// activation rounds in chunks of 32 here, of 256 there, as the CPU rounds it: 1.2–2.2%
/// measured on lavapipe, where two chunks' scales swapped in the down give 45%) and within 5%
/// of the CPU's. The
/// profile shows one gate/up dispatch a layer where the tail takes two, and no `quant_act`
/// (the down reads the chunks as they are).
#[test]
fn gate_and_up_quantizing_their_own_rows_follow_the_tail() {
    let prompt = [17u32, 300, 5, 911];
    let cont: Vec<u32> = (0..6).map(|i| (i * 97 + 13) % 1024).collect();
    let ms = |a: &[f32]| a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64;
    let dir = std::env::temp_dir().join(format!("zinc-glu-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // The down-projection in each of matvec_dec's K-quant paths: Q6_K (dense and MoE), Q6_K at
    // 2 pieces on quarter pairs, Q4_K on sub-block pairs (dense) and without (MoE forms).
    let q6 = GgmlType::Q6_K;
    let q4 = GgmlType::Q4_K;
    // Each case also at fewer rows a group of lanes (`glu_rows_nr`: wider workgroups).
    for (what, moe, fused, down, pieces, nr) in [
        ("dense", None, false, q6, None, 2),
        ("dense-pairs", None, false, q6, Some(2), 1),
        ("dense-q4k", None, false, q4, None, 2),
        ("moe", Some((16, 8)), false, q6, None, 2),
        ("moe-fused", Some((16, 8)), true, q6, None, 2),
        ("moe-q4k", Some((16, 8)), false, q4, None, 4),
    ] {
        let mut spec = small_qwen3(1024, 768);
        spec.wide_type = down;
        if let Some((experts, used)) = moe {
            spec.arch = "qwen3moe".into();
            spec.n_expert = experts;
            spec.n_expert_used = used;
            spec.fused_gate_up = fused;
            spec.expert_scales = fused;
        }
        let path = dir.join(format!("{what}.gguf"));
        zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
        let file = Arc::new(GgufModel::open(&path).expect("open"));
        let cpu = engine(CpuBackend::new(), &file);
        let lc = forced(&cpu, &prompt, &cont);
        let gpu = |rows: bool, nr: Option<u32>, fuse_norm: bool| {
            validated(
                VulkanOptions {
                    threads_per_row: Some(16),
                    decode_kquant: Some((32, 1, 128)),
                    decode_pieces: pieces,
                    glu_rows: Some(rows),
                    glu_rows_nr: nr,
                    fuse_norm: Some(fuse_norm),
                    profile: true,
                    ..Default::default()
                },
                &file,
            )
        };
        let (on, off, on_nr) = (
            gpu(true, None, false),
            gpu(false, None, false),
            gpu(true, Some(nr), false),
        );
        // With the pre-norms deferred into the residual mat-vecs (`fuse_norm`), the gate/up
        // apply the norm's scale themselves (RS, its parts where the up's scales would go;
        // where there are up scales, the tail does).
        let on_rs = gpu(true, None, true);
        let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
        let (l_nr, l_rs) = (
            forced(&on_nr, &prompt, &cont),
            forced(&on_rs, &prompt, &cont),
        );
        let n_ff = format!(" {}×1024", spec.n_ff);
        let calls = |e: &Engine<VulkanBackend>| {
            let gate_up = kernel_calls(e, |n| n.ends_with(&n_ff) && n.contains("matvec_dec"));
            (gate_up, kernel_calls(e, |n| n == "quant_act"))
        };
        let ((c_on, q_on), (c_off, q_off)) = (calls(&on), calls(&off));
        assert!(
            c_on > 0
                && 2 * c_on == c_off
                && calls(&on_nr) == (c_on, q_on)
                // (The up's expert scales and the norm's parts share a push constant: with
                // both, the tail.)
                && calls(&on_rs).0 == if spec.expert_scales { c_off } else { c_on },
            "{what}: {c_on} gate/up dispatches against {c_off}"
        );
        // The deferred norms ran: fewer norm dispatches, and the gate/up did not settle them
        // (rscale), but for one (the prompt's last row, gathered before the output norm).
        let norms = |e: &Engine<VulkanBackend>, k: &str| kernel_calls(e, |n| n == k);
        assert!(
            norms(&on_rs, "norm_quant") < norms(&on, "norm_quant") && norms(&on_rs, "rscale") <= 1,
            "{what}: the deferred norms did not run: {} norm_quant against {}, {} rscale",
            norms(&on_rs, "norm_quant"),
            norms(&on, "norm_quant"),
            norms(&on_rs, "rscale")
        );
        assert_eq!(q_on, q_off, "{what}: the down quantized its input again");
        let steps = l_on.iter().zip(&l_off).zip(&lc).zip(l_nr.iter().zip(&l_rs));
        for (i, (((a, b), c), (n, r))) in steps.enumerate() {
            for (a, form) in [
                (a, "the default rows a group"),
                (n, "other rows a group"),
                (r, "deferred norms"),
            ] {
                let d: Vec<f32> = a.iter().zip(b).map(|(x, y)| x - y).collect();
                let (dist, scale) = (ms(&d).sqrt(), ms(b).sqrt());
                assert!(
                    dist < 0.03 * scale,
                    "{what}, {form}, step {i}: {dist} from the tail's logits (RMS {scale})"
                );
            }
            let d: Vec<f32> = a.iter().zip(c).map(|(x, y)| x - y).collect();
            let (dist, scale) = (ms(&d).sqrt(), ms(c).sqrt());
            assert!(
                dist < 0.05 * scale,
                "{what}, step {i}: {dist} from the CPU (RMS {scale})"
            );
        }
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A synthetic Qwen3 for `attn_x32`'s tests — 8 query heads of 64 over 2 KV heads (Q8_K's
/// blocks take four a workgroup), q/k/o/gate/up in `weight_type` — written to a fresh temporary
/// folder named after `what`: the folder (for the caller to remove) and the open file.
fn x32_model(what: &str, weight_type: GgmlType) -> (std::path::PathBuf, Arc<GgufModel>) {
    let dir = std::env::temp_dir().join(format!("zinc-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(256, 512);
    spec.n_head = 8;
    spec.n_head_kv = 2;
    spec.head_dim = 64;
    spec.weight_type = weight_type;
    let path = dir.join("qwen3.gguf");
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    (dir, Arc::new(GgufModel::open(&path).expect("open")))
}

/// A profiling Vulkan engine on `file` with the decode attention on attn_dec.comp at every
/// length, the K-quant decode mat-vec at a GPU's shape (lavapipe's own is off) and `attn_x32`.
fn x32_engine(file: &Arc<GgufModel>, x32: bool) -> Engine<VulkanBackend> {
    validated(
        VulkanOptions {
            threads_per_row: Some(16),
            cpu_attention: Some(false),
            decode_kquant: Some((32, 1, 128)),
            attn_x32: Some(x32),
            profile: true,
            ..Default::default()
        },
        file,
    )
}

/// The root mean square of `a`, and of `a − b`.
fn rms(a: &[f32]) -> f64 {
    (a.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / a.len() as f64).sqrt()
}

fn rms_diff(a: &[f32], b: &[f32]) -> f64 {
    let d: Vec<f32> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    rms(&d)
}

/// Logits `a` within 3% of the RMS of another form's (`form`: its logits and name) and within 5%
/// of the CPU's.
fn near_form_and_cpu(at: &str, a: &[f32], form: (&[f32], &str), cpu: &[f32]) {
    let (b, name) = form;
    assert!(
        rms_diff(a, b) < 0.03 * rms(b),
        "{at}: {} from the {name} form's logits (RMS {})",
        rms_diff(a, b),
        rms(b)
    );
    assert!(
        rms_diff(a, cpu) < 0.05 * rms(cpu),
        "{at}: {} from the CPU (RMS {})",
        rms_diff(a, cpu),
        rms(cpu)
    );
}

/// The decode attention over one slice quantizing its output in Q8_0-style chunks of 32 for a
/// K-quant out-projection (`VulkanOptions::attn_x32`, on by default: a query head a workgroup,
/// the projection reading each chunk's own scale): a synthetic Qwen3 (8 query heads of 64 over 2 KV
/// heads, a Q4_K out-projection on the K-quant decode mat-vec) decodes within 3% of the RMS of
/// the Q8_K form's logits at every step after a short prompt, and within 5% of the CPU's; the
/// logits differ from the Q8_K form's in their bits (the option takes effect) with no
/// quantization dispatch more (the projection reads the chunks as they are). Past one slice
/// (a prompt of 150 keys; the default takes up to 128 in one) the two forms give the same bits.
#[test]
fn the_decode_attention_quantizing_in_chunks_of_32_follows_q8k() {
    let (dir, file) = x32_model("attn-x32", GgmlType::Q4_K);
    let cpu = engine(CpuBackend::new(), &file);
    let cont: Vec<u32> = (0..8).map(|i| (i * 61 + 3) % 1024).collect();
    for prompt_len in [4usize, 150] {
        let prompt: Vec<u32> = (0..prompt_len as u32)
            .map(|i| (i * 43 + 9) % 1024)
            .collect();
        let (on, off) = (x32_engine(&file, true), x32_engine(&file, false));
        let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
        let lc = forced(&cpu, &prompt, &cont);
        let mut differ = false;
        for (i, ((a, b), c)) in l_on.iter().zip(&l_off).zip(&lc).enumerate() {
            differ |= a.iter().zip(b).any(|(x, y)| x.to_bits() != y.to_bits());
            near_form_and_cpu(&format!("prompt {prompt_len}, step {i}"), a, (b, "Q8_K"), c);
        }
        assert_eq!(
            differ,
            prompt_len < 128,
            "prompt {prompt_len}: chunks of 32 should change the bits within one slice only"
        );
        let quants = |e: &Engine<VulkanBackend>| kernel_calls(e, |n| n == "quant_act");
        assert_eq!(
            quants(&on),
            quants(&off),
            "prompt {prompt_len}: the out-projection quantized the attention's output again"
        );
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Split decode attention merged in place by its last workgroup (`VulkanOptions::attn_merge`)
/// with its output in chunks of 32 for the K-quant out-projection (`attn_x32`): after a prompt
/// of 200 tokens (7 slices of 32 keys), every step's logits within 3% of the RMS of the
/// default form's (slices merged by `attn_combine`, the output in Q8_K blocks) and 5% of the
/// CPU's, with neither an `attn_combine` dispatch nor a quantization dispatch more than the
/// default form; without the chunks the merged output (one head of 64 a workgroup, not a
/// 256-block) is quantized by a dispatch of its own.
#[test]
fn split_attention_merged_in_place_quantizes_in_chunks_of_32() {
    let (dir, file) = x32_model("attn-merge-x32", GgmlType::Q4_K);
    let cpu = engine(CpuBackend::new(), &file);
    let prompt: Vec<u32> = (0..200u32).map(|i| (i * 37 + 11) % 1024).collect();
    let cont: Vec<u32> = (0..6).map(|i| (i * 67 + 13) % 1024).collect();
    let gpu = |merge: bool, x32: bool| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                cpu_attention: Some(false),
                decode_kquant: Some((32, 1, 128)),
                attn_merge: Some(merge),
                attn_x32: Some(x32),
                profile: true,
                ..Default::default()
            },
            &file,
        )
    };
    let (merged, plain, merged_q8k) = (gpu(true, true), gpu(false, true), gpu(true, false));
    let l_m = forced(&merged, &prompt, &cont);
    let l_p = forced(&plain, &prompt, &cont);
    let lc = forced(&cpu, &prompt, &cont);
    for (i, ((a, b), c)) in l_m.iter().zip(&l_p).zip(&lc).enumerate().skip(1) {
        near_form_and_cpu(&format!("step {i}"), a, (b, "default"), c);
    }
    let _ = forced(&merged_q8k, &prompt, &cont);
    let combines = |e: &Engine<VulkanBackend>| kernel_calls(e, |n| n == "attn_combine");
    let quants = |e: &Engine<VulkanBackend>| kernel_calls(e, |n| n == "quant_act");
    assert!(
        combines(&plain) > 0,
        "the default form merged without attn_combine"
    );
    assert_eq!(
        combines(&merged),
        0,
        "the merged form still ran attn_combine"
    );
    assert_eq!(
        quants(&merged),
        quants(&plain),
        "the out-projection quantized the merged output again"
    );
    assert!(
        quants(&merged_q8k) > quants(&merged),
        "without chunks of 32 the merged output should need a quantization of its own"
    );
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Decode attention's keys and values in one pass (`VulkanOptions::attn_one_pass`: a running
/// softmax a key slot, each value loaded with its key): a synthetic Qwen3 (8 query heads of 64
/// over 2 KV heads; workgroups of 128 loading 2 keys ahead, so a slot takes 32 keys a pass)
/// after a prompt of 100 tokens (one slice, the output written and quantized in chunks of 32 by
/// the attention; several passes, so the running softmax rescales), of 200 (7 slices merged by
/// `attn_combine`) and of 200 with the slices merged in place (`attn_merge`) decodes within 3%
/// of the RMS of the two-pass form's logits at every step and within 5% of the CPU's; the
/// profile shows the one-pass kernel ran and the two-pass one not.
/// (Their bits may well agree: the attention's output is quantized to 8 bits for the
/// out-projection, which absorbs the last-bit differences of the two roundings.)
#[test]
fn decode_attention_in_one_pass_follows_two() {
    let (dir, file) = x32_model("attn-one-pass", GgmlType::Q4_K);
    let cpu = engine(CpuBackend::new(), &file);
    let cont: Vec<u32> = (0..6).map(|i| (i * 67 + 13) % 1024).collect();
    let gpu = |one: bool, merge: bool| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                cpu_attention: Some(false),
                decode_kquant: Some((32, 1, 128)),
                attn_one_pass: Some(one),
                attn_merge: Some(merge),
                attn_wg: Some(128),
                attn_ahead: Some(2),
                profile: true,
                ..Default::default()
            },
            &file,
        )
    };
    for (prompt_len, merge) in [(100u32, false), (200, false), (200, true)] {
        let prompt: Vec<u32> = (0..prompt_len).map(|i| (i * 37 + 11) % 1024).collect();
        let (one, two) = (gpu(true, merge), gpu(false, merge));
        let l_one = forced(&one, &prompt, &cont);
        let l_two = forced(&two, &prompt, &cont);
        let ran = kernels_run(&one);
        assert!(
            ran.iter().any(|n| n == "attn_prep one-pass") && !ran.iter().any(|n| n == "attn_prep"),
            "prompt {prompt_len}, merge {merge}: {ran:?}"
        );
        let lc = forced(&cpu, &prompt, &cont);
        for (i, ((a, b), c)) in l_one.iter().zip(&l_two).zip(&lc).enumerate().skip(1) {
            let at = format!("prompt {prompt_len}, merge {merge}, step {i}");
            near_form_and_cpu(&at, a, (b, "two-pass"), c);
        }
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Decode attention with each key read once for several of a KV head's query heads
/// (`VulkanOptions::attn_rows`: a key's score by two invocations holding 4 of its 16-byte
/// pieces each at these 64-wide heads, its values by slots of 8 invocations): a synthetic Qwen3
/// (8 query heads of 64 over 2 KV heads) after a prompt of 200 tokens in 7 slices of all 4
/// heads a workgroup merged by `attn_combine`, in one slice of 208 keys of 2 heads a workgroup
/// (two passes of 128 keys: the second's keys and values loaded in the loop), and of 240 in two
/// slices of 4 heads merged in place (`attn_merge`), decodes within 3% of the RMS of the one-pass form's logits at
/// every step, with the same bits at half the steps or more, and within 5% of the CPU's; the
/// profile shows the rows kernel ran and the one-pass one not. The first prompt's workgroups
/// are the plan's own (256 invocations) at 4 keys an invocation (`attn_dec_prep_rows`), the
/// others 128 at 2 (`attn_dec_prep_rows2`).
#[test]
fn decode_attention_by_key_rows_follows_one_pass() {
    let (dir, file) = x32_model("attn-rows", GgmlType::Q4_K);
    let cpu = engine(CpuBackend::new(), &file);
    let cont: Vec<u32> = (0..6).map(|i| (i * 67 + 13) % 1024).collect();
    let gpu = |rows: Option<u32>, slices: Option<u32>, merge: bool, shape: (u32, Option<u32>)| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                cpu_attention: Some(false),
                decode_kquant: Some((32, 1, 128)),
                attn_rows: rows,
                attn_slices: slices,
                attn_merge: Some(merge),
                attn_ahead: Some(shape.0),
                attn_rows_keys: Some(shape.0),
                attn_wg: shape.1,
                profile: true,
                ..Default::default()
            },
            &file,
        )
    };
    let (mut same, mut steps) = (0, 0);
    // (prompt, slices, merged in place, heads a workgroup, (keys ahead, workgroup))
    for (prompt_len, slices, merge, heads, shape) in [
        (200u32, None, false, 4, (4, None)),
        (200, Some(1), false, 2, (2, Some(128))),
        (240, Some(2), true, 4, (2, Some(128))),
    ] {
        let prompt: Vec<u32> = (0..prompt_len).map(|i| (i * 37 + 11) % 1024).collect();
        let rows = gpu(Some(heads), slices, merge, shape);
        let one = gpu(None, slices, merge, shape);
        let l_rows = forced(&rows, &prompt, &cont);
        let l_one = forced(&one, &prompt, &cont);
        let ran = kernels_run(&rows);
        assert!(
            ran.iter().any(|n| n == "attn_prep rows")
                && !ran.iter().any(|n| n == "attn_prep one-pass"),
            "prompt {prompt_len}, slices {slices:?}: {ran:?}"
        );
        let lc = forced(&cpu, &prompt, &cont);
        for (i, ((a, b), c)) in l_rows.iter().zip(&l_one).zip(&lc).enumerate().skip(1) {
            let at = format!(
                "prompt {prompt_len}, slices {slices:?}, merge {merge}, {heads} heads, step {i}"
            );
            near_form_and_cpu(&at, a, (b, "one-pass"), c);
            same += usize::from(a == b);
            steps += 1;
        }
    }
    // The two forms round their sums in other orders, which the output's 8-bit quantization for
    // the out-projection mostly absorbs (on lavapipe 11 of these 15 steps give the same bits;
    // of the rest two are 1e-7 of the RMS apart, two 0.9% and 1.5% after a rounding flipped).
    assert!(
        2 * same >= steps,
        "{same} of {steps} steps gave the one-pass form's bits"
    );
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// attn_combine.comp's AHEAD variant (`VulkanOptions::combine_ahead`: 8 slices' partials
/// loaded at once, each output still summed in slice order): a synthetic Qwen3 decoding after
/// prompts of 200 and 600 tokens (the split attention's slices merged by attn_combine: 7, and
/// 13 — a pass of 8 and one of 5) gives the plain merge's logits to the bit at every step, and
/// the profile shows the variant ran in place of the plain kernel.
#[test]
fn attn_combine_ahead_gives_the_plain_merges_bits() {
    let (dir, file) = x32_model("combine-ahead", GgmlType::Q4_K);
    let cont: Vec<u32> = (0..5).map(|i| (i * 59 + 7) % 1024).collect();
    let gpu = |ahead: bool| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                cpu_attention: Some(false),
                combine_ahead: Some(ahead),
                profile: true,
                ..Default::default()
            },
            &file,
        )
    };
    // `forced` with room for the longer prompt.
    let run = |e: &Engine<VulkanBackend>, prompt: &[u32]| {
        let mut s = e.session(640);
        let mut out = Vec::new();
        let mut input = prompt.to_vec();
        for &t in &cont {
            let v = s.eval(&input, Logits::Last).expect("eval");
            out.push(v.into_iter().next_back().expect("logits"));
            input = vec![t];
        }
        out
    };
    for prompt_len in [200u32, 600] {
        let prompt: Vec<u32> = (0..prompt_len).map(|i| (i * 41 + 3) % 1024).collect();
        let (ahead, plain) = (gpu(true), gpu(false));
        let (la, lp) = (run(&ahead, &prompt), run(&plain, &prompt));
        assert_eq!(la.len(), lp.len());
        for (i, (a, b)) in la.iter().zip(&lp).enumerate() {
            assert!(a == b, "prompt {prompt_len}, step {i}: the logits differ");
        }
        let (ran, ran_plain) = (kernels_run(&ahead), kernels_run(&plain));
        assert!(
            ran.iter().any(|n| n == "attn_combine_ahead")
                && !ran.iter().any(|n| n == "attn_combine")
                && ran_plain.iter().any(|n| n == "attn_combine"),
            "prompt {prompt_len}: {ran:?} / {ran_plain:?}"
        );
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `attn_x32` where the out-projection cannot take chunks of 32 (a Q5_K one, not on
/// matvec_dec): the first such projection quantizes the attention's output afresh and the
/// attention goes back to Q8_K blocks for good — at most one quantization dispatch more than
/// with the option off over a whole decode (not one a layer and step), and logits within 0.1%
/// of the option-off run's RMS.
#[test]
fn attn_x32_steps_back_for_an_out_projection_that_refuses_chunks() {
    // q, k, o, gate and up in Q5_K (no matvec_dec form); v and down in Q6_K.
    let (dir, file) = x32_model("attn-x32-q5k", GgmlType::Q5_K);
    let prompt = [5u32, 77, 301, 9];
    let cont: Vec<u32> = (0..8).map(|i| (i * 53 + 21) % 1024).collect();
    let (on, off) = (x32_engine(&file, true), x32_engine(&file, false));
    let (l_on, l_off) = (forced(&on, &prompt, &cont), forced(&off, &prompt, &cont));
    for (i, (a, b)) in l_on.iter().zip(&l_off).enumerate() {
        assert!(
            rms_diff(a, b) <= 1e-3 * rms(b),
            "step {i}: {} from the option-off logits",
            rms_diff(a, b)
        );
    }
    let quants = |e: &Engine<VulkanBackend>| kernel_calls(e, |n| n == "quant_act");
    let (q_on, q_off) = (quants(&on), quants(&off));
    assert!(
        q_on <= q_off + 1,
        "{q_on} quantizations with the option against {q_off} without: the attention kept \
         quantizing in chunks its out-projection refuses"
    );
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The kernels' clock (`VulkanOptions::clock`): the clocked kernels compute the very bits of the
/// plain ones (every logit of every step, one slice of keys and several), and each decode step's
/// records — one a workgroup dispatched, none lost — come back with their kernels' labels, each
/// stage's workgroups starting and ending in order. On a GPU, also: no record of another
/// kernel in a stage, and no stage starting before the one before it has ended (what the
/// barrier between them promises and the placement by time relies on). Not on a CPU device:
/// lavapipe's "device clock" is each host thread's cycle counter, and on this CI's virtual
/// cores a thread moved between them mid-workgroup was seen to read counters milliseconds apart.
#[test]
fn the_kernels_clock_places_every_workgroup_in_its_stage() {
    let (dir, file) = x32_model("clock", GgmlType::Q4_K);
    let gpu = |clock: bool| {
        validated(
            VulkanOptions {
                threads_per_row: Some(16),
                cpu_attention: Some(false),
                decode_kquant: Some((32, 1, 128)),
                clock,
                ..Default::default()
            },
            &file,
        )
    };
    let (plain, clocked) = (gpu(false), gpu(true));
    let cpu = clocked.backend.device().kind == zinc_vulkan::DeviceKind::Cpu;
    assert!(plain.backend.clock_step().unwrap().is_none());
    let prompt: Vec<u32> = (0..140).map(|i| (i * 37 + 11) % 1024).collect();
    let cont: Vec<u32> = (0..4).map(|i| (i * 67 + 13) % 1024).collect();
    assert_eq!(
        forced(&plain, &prompt, &cont),
        forced(&clocked, &prompt, &cont),
        "the clocked kernels' logits"
    );
    // Decode steps after 3 keys (one slice) and after 140 (several, merged by attn_combine).
    for len in [3usize, 140] {
        let mut s = clocked.session(256);
        s.eval(&prompt[..len], Logits::Last).expect("prompt");
        clocked.backend.clock_step().unwrap(); // the prompt's records let go
        for &t in &cont[..2] {
            s.eval(&[t], Logits::Last).expect("step");
            let step = clocked.backend.clock_step().unwrap().expect("clocked");
            let at = format!("{len} keys");
            assert!(step.expected > 0, "{at}: no clocked workgroup");
            assert_eq!(step.counted, step.expected, "{at}: records lost");
            assert!(
                cpu || step.misplaced == 0,
                "{at}: {} records in another kernel's stage: {:#?}",
                step.misplaced,
                step.stages
            );
            let clocked_stages: Vec<_> = step.stages.iter().filter(|s| s.groups > 0).collect();
            assert!(clocked_stages.len() >= 2 * 2, "{at}: {:?}", step.stages);
            let labels: Vec<&str> = clocked_stages.iter().map(|s| s.label.as_str()).collect();
            assert!(
                labels.iter().any(|l| l.starts_with("attn_prep"))
                    && labels.iter().any(|l| l.starts_with("matvec_dec_Q4_K ")),
                "{at}: {labels:?}"
            );
            let mut end = 0.0;
            for st in &clocked_stages {
                assert!(
                    (cpu || st.first_start >= end)
                        && st.last_start >= st.first_start
                        && st.wg_max >= st.wg_median
                        && (0.0..=st.last_end - st.first_start).contains(&st.end90),
                    "{at}: {st:?} after a stage that ended at {end}"
                );
                end = st.last_end;
            }
        }
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// How a recording is cut into pieces changes nothing but when the GPU starts: a 12-layer
/// synthetic Qwen3 prompted and decoded with every command its own piece and only the last
/// submit fenced (`piece_fences: false`; more pieces a recording than the flying list holds,
/// so its last slot takes a fence and the oldest pieces are freed on a later one's), with
/// pieces growing 3× from 2 commands (`submit_growth`), and with adaptive pieces (sent early
/// once the device has finished the ones before: `submit_adaptive`), gives the default's
/// logits bit for bit, without validation errors.
#[test]
fn pieces_without_fences_or_growing_faster_keep_the_logits() {
    let dir = std::env::temp_dir().join(format!("zinc-pieces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(256, 512);
    spec.n_layer = 12;
    let path = dir.join("qwen3-pieces.gguf");
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    let file = Arc::new(GgufModel::open(&path).expect("open"));
    let opts = |chunks: (u32, u32), growth: u32, fences: bool, adaptive: bool| VulkanOptions {
        threads_per_row: Some(16),
        cpu_attention: Some(false),
        decode_kquant: Some((32, 1, 128)),
        submit_chunks: Some(chunks),
        submit_growth: Some(growth),
        piece_fences: Some(fences),
        submit_adaptive: Some(adaptive),
        ..Default::default()
    };
    let prompt: Vec<u32> = (0..6).map(|i| (i * 41 + 7) % 1024).collect();
    let cont: Vec<u32> = (0..5).map(|i| (i * 97 + 3) % 1024).collect();
    let mut pieces = Vec::new();
    let want = forced(
        &validated(opts((8, 64), 2, true, false), &file),
        &prompt,
        &cont,
    );
    for (what, o) in [
        (
            "every command a piece, unfenced",
            opts((1, 1), 2, false, false),
        ),
        ("pieces growing 3× from 2", opts((2, 512), 3, true, false)),
        (
            "growing 4× from 8, unfenced",
            opts((8, 512), 4, false, false),
        ),
        (
            "adaptive, growing 4× from 2",
            opts((2, 512), 4, false, true),
        ),
        (
            "the defaults (8x512 growing 4×, adaptive)",
            VulkanOptions {
                submit_chunks: None,
                submit_growth: None,
                piece_fences: None,
                submit_adaptive: None,
                ..opts((1, 1), 2, false, false)
            },
        ),
        (
            "adaptive, its fence read at every command",
            VulkanOptions {
                adaptive_poll_us: Some(0),
                ..opts((2, 512), 4, true, true)
            },
        ),
    ] {
        let e = validated(o, &file);
        let got = forced(&e, &prompt, &cont);
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{what}, step {i}: the logits differ"
            );
        }
        pieces.push(e.backend.pieces_sent());
    }
    // Every command a piece: on average more pieces a recording (the prompt's and four steps')
    // than the flying list holds (64).
    assert!(pieces[0] > 64 * cont.len() as u64, "{pieces:?}");
    // The adaptive pieces go at least as often as the same pieces without it (lavapipe runs
    // a piece while the host records the next, or at once).
    let fixed = validated(opts((2, 512), 4, false, false), &file);
    forced(&fixed, &prompt, &cont);
    assert!(pieces[3] >= fixed.backend.pieces_sent(), "{pieces:?}");
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Decode steps recorded ahead (`VulkanOptions::step_ahead`: the next step recorded while the
/// device runs this one, its token written at its launch, submitted whole) give the logits and
/// the greedy tokens of steps recorded in the ordinary way, bit for bit — on a 12-layer Qwen3
/// and a Qwen3-MoE (whose router holds a norm back) — and are launched where nothing else was
/// recorded in between. Two sessions taking turns on one device spoil each other's steps ahead
/// (each records between the other's step and its launch): every step is then recorded again,
/// with the same logits. A truncated session drops its step ahead.
#[test]
fn steps_recorded_ahead_keep_the_logits() {
    let dir = std::env::temp_dir().join(format!("zinc-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut spec = small_qwen3(256, 512);
    spec.n_layer = 12;
    let path = dir.join("qwen3-ahead.gguf");
    zinc_models::synth::write_synthetic(&spec, &path).expect("synthetic model");
    let dense = Arc::new(GgufModel::open(&path).expect("open"));
    let (moe_dir, _, moe) = small_qwen3_moe("ahead-moe", (256, 256), (8, 2));
    let opts = |ahead: bool| VulkanOptions {
        step_ahead: Some(ahead),
        ..Default::default()
    };
    let prompt: Vec<u32> = (0..6).map(|i| (i * 41 + 7) % 1024).collect();
    let cont: Vec<u32> = (0..7).map(|i| (i * 97 + 3) % 1024).collect();
    let same = |what: &str, a: &[Vec<f32>], b: &[Vec<f32>]| {
        assert_eq!(a.len(), b.len(), "{what}");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{what}, step {i}: the logits differ"
            );
        }
    };
    for (name, file) in [("qwen3", &dense), ("qwen3moe", &moe)] {
        let plain = validated(opts(false), file);
        let ahead = validated(opts(true), file);
        let launched = |e: &Engine<VulkanBackend>| e.backend.host_gaps().expect("gaps").ahead;

        // Teacher-forced steps through `eval`: the first single-token step is recorded in the
        // ordinary way, each later one ahead.
        let want = forced(&plain, &prompt, &cont);
        let got = forced(&ahead, &prompt, &cont);
        same(&format!("{name}, eval"), &got, &want);
        assert_eq!(launched(&plain), 0, "{name}: the option off launches none");
        assert_eq!(launched(&ahead), cont.len() as u64 - 2, "{name}: eval");

        // Greedy generation (the argmax recorded with each step ahead).
        let n0 = launched(&ahead);
        let g = greedy(&ahead, &prompt, 8);
        assert_eq!(g, greedy(&plain, &prompt, 8), "{name}: greedy tokens");
        assert_eq!(launched(&ahead) - n0, 6, "{name}: greedy");

        // The logits lent in place (`eval_last_with`), as `zinc bench` reads them.
        let lent = |e: &Engine<VulkanBackend>| {
            let mut s = e.session(64);
            s.eval(&prompt, Logits::Last).expect("prompt");
            (cont.iter())
                .map(|&t| s.eval_last_with(&[t], |l| l.to_vec()).expect("step"))
                .collect::<Vec<_>>()
        };
        same(&format!("{name}, lent"), &lent(&ahead), &lent(&plain));

        // Two sessions taking turns: each spoils the other's step ahead.
        let turns = |e: &Engine<VulkanBackend>| {
            let (mut a, mut b) = (e.session(64), e.session(64));
            a.eval(&prompt, Logits::Last).expect("prompt");
            b.eval(&prompt[..4], Logits::Last).expect("prompt");
            let mut out = Vec::new();
            for &t in &cont {
                out.extend(a.eval(&[t], Logits::Last).expect("a"));
                out.extend(b.eval(&[t ^ 5], Logits::Last).expect("b"));
            }
            out
        };
        let n0 = launched(&ahead);
        same(&format!("{name}, turns"), &turns(&ahead), &turns(&plain));
        assert_eq!(launched(&ahead), n0, "{name}: a spoiled step was launched");

        // Truncated after a step ahead was recorded: the position comes again with another
        // history, and the step is recorded anew (launched: the second step before the rewind
        // and the second after it).
        let rewind = |e: &Engine<VulkanBackend>| {
            let mut s = e.session(64);
            s.eval(&prompt, Logits::Last).expect("prompt");
            s.eval(&cont[..1], Logits::Last).expect("step");
            s.eval(&cont[1..2], Logits::Last).expect("step");
            s.truncate(prompt.len());
            s.eval(&cont[2..3], Logits::Last).expect("after the rewind");
            s.eval(&cont[3..4], Logits::Last).expect("after the rewind")
        };
        let n0 = launched(&ahead);
        same(&format!("{name}, rewind"), &rewind(&ahead), &rewind(&plain));
        assert_eq!(launched(&ahead) - n0, 2, "{name}: rewind");
    }
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&moe_dir);
}

/// A wait inside a step being recorded ahead (a read: `Recorder::demote_ahead`) sends what was
/// recorded as an ordinary recording — the read sees every command before it, the step cannot
/// be launched (`ahead_end` gives no ticket) — and the backend goes on as ever; a step ahead
/// whose forward failed (`ahead_end(None)`) leaves nothing behind; a launch under a ticket not
/// handed out is refused.
#[test]
fn a_wait_inside_a_step_ahead_makes_it_an_ordinary_recording() {
    let b = VulkanBackend::new(&VulkanOptions {
        validation: true,
        ..Default::default()
    })
    .expect("a Vulkan device (CI installs lavapipe)");
    let x: Vec<f32> = (0..64).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..64).map(|i| 1.0 - i as f32).collect();
    let prev = b.tensor_from(&x, 1, 64);
    assert!(b.ahead_begin(&prev), "steps ahead are on by default");
    // Recorded inside the step ahead, then waited for.
    let mut t = b.tensor_from(&y, 1, 64);
    b.add(&mut t, &prev);
    let sum: Vec<f32> = x.iter().zip(&y).map(|(a, c)| a + c).collect();
    assert_eq!(b.read(&t), sum, "the read inside the step ahead");
    b.scale(&mut t, 2.0);
    assert_eq!(b.ahead_end(Some(&t)), None, "a demoted step was kept");
    let twice: Vec<f32> = sum.iter().map(|v| v * 2.0).collect();
    assert_eq!(b.read(&t), twice, "after the demoted step");
    assert_eq!(b.read(&prev), x);
    // A forward that failed: nothing of it runs, nothing is kept.
    assert!(b.ahead_begin(&prev));
    let mut u = b.tensor_from(&y, 1, 64);
    b.scale(&mut u, 3.0);
    assert_eq!(b.ahead_end(None), None);
    assert_eq!(b.read(&prev), x);
    // A ticket never handed out launches nothing.
    assert!(!b.ahead_launch(12345, 0));
    assert_eq!(b.host_gaps().expect("gaps").ahead, 0);
    assert_eq!(
        zinc_vulkan::validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
}
