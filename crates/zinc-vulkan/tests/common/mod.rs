//! The conformance suite's run on the Vulkan backend, shared by the test binaries (each its own
//! process: a driver setting such as lavapipe's vector width applies to the whole process).

use zinc_backend::conformance::{run, Tolerance};
use zinc_vulkan::{validation_errors, VulkanBackend, VulkanOptions};

pub type Shape = Option<(u32, u32, u32)>;

/// `conforms`'s arguments: threads per row, integer dots, CPU-style attention, the decode
/// mat-vec's shape, the K-quants' and their (pieces, passes, pair).
pub type Run = (u32, bool, bool, Shape, Shape, Option<(u32, u32, bool)>);

/// The GPU-style run: 16 threads per row, integer dots, split-key attention, K-quant decode
/// steps on matvec_dec.comp at GPUs' default shape with 2 passes' loads at once.
pub const GPU_STYLE: Run = (
    16,
    true,
    false,
    None,
    Some((32, 2, 128)),
    Some((4, 2, false)),
);

/// One run of the suite under the validation layer with these kernel shapes (see
/// conformance.rs), every case passing and no validation error; returns the device's name and
/// subgroup size.
pub fn conforms(
    tpr: u32,
    int_dot: bool,
    cpu_attention: bool,
    decode: Shape,
    kquant: Shape,
    pieces: Option<(u32, u32, bool)>,
) -> (String, u32) {
    let b = VulkanBackend::new(&VulkanOptions {
        device: None,
        validation: true,
        threads_per_row: Some(tpr),
        prompt_threads_per_row: Some(tpr),
        int_dot: Some(int_dot),
        cpu_attention: Some(cpu_attention),
        decode_matvec: decode,
        decode_kquant: kquant,
        decode_pieces: pieces.map(|p| p.0),
        decode_passes: pieces.map(|p| p.1),
        decode_pair: pieces.map(|p| p.2),
        // Decode attention: 128 invocations a slice loading 8 keys at once (the GPU-style run
        // with the in-place merge), else 256 loading 2.
        attn_wg: Some(if tpr == 16 { 128 } else { 256 }),
        attn_ahead: Some(if tpr == 16 { 8 } else { 2 }),
        // The float run sends its commands to the device a few at a time, in pieces of one,
        // two, then three commands (barriers between command buffers order them as within one).
        submit_chunks: (tpr == 64).then_some((1, 3)),
        // MoE routing: the one-pass ranking, except in the float run (a round per pick); the
        // router that routes in workgroups of 128 (an expert an invocation, the default), and
        // of 64 in the GPU-style run.
        route_rank: Some(tpr != 64),
        router_wg: (tpr == 16).then_some(64),
        attn_merge: Some(tpr == 16),
        // A prompt's q/k prep a subgroup a head (qk_prep_rows.comp, off by default) in the
        // GPU-style run: the conformance's prompt cases hold it to the bit of the separate ops.
        prep_rows: Some(tpr == 16),
        // The float run with the GPUs' attention (whose f32 kernels read activations
        // act_quant.comp rounds) finds their blocks' largest magnitudes by subgroup shuffles
        // (its SG, off by default; the other float run keeps the tree): the same elements as
        // the tree, so the same numbers.
        act_quant_sg: Some(tpr == 64 && !cpu_attention),
        // Both float runs compute a prompt's gated activation in the dispatch that rounds it
        // for the down-projection (`glu_round`, off by default; its tree and its shuffles).
        glu_round: Some(tpr == 64),
        // and its pre-norms with their projections' rounding (`norm_round`, off by default).
        norm_round: Some(tpr == 64),
        // Keys and values in one pass (a running softmax a key slot) in the last run, over
        // every slice: its four heads a workgroup, one slice of up to 1,024 keys and
        // attn_combine's slices past it, for heads of 8 × the lanes a key (64 wide and narrower
        // at lavapipe's subgroups of 8; wider heads keep two passes); the others take two passes
        // over every slice.
        attn_one_pass: Some(tpr == 8),
        // Each key read once for all of a KV head's query heads over split slices (up to 8 a
        // workgroup) in the float run with the GPUs' attention: its workgroups of 256
        // (attn_slots.glsl's sums one subgroup after another at lavapipe's subgroups) and 2
        // keys an invocation (`attn_dec_*rows2`, the default `attn_rows_keys`).
        attn_rows: (tpr == 64 && !cpu_attention).then_some(8),
        // Query heads a workgroup over split keys: 2 in the merging run, 4 in the last (five
        // heads in attn_dec_prep's norm loop: four queries and the key); the last also takes
        // up to 1,024 keys in one slice written directly. The runs with CPU-style attention
        // split longer contexts at the default, one.
        attn_heads: match tpr {
            16 => Some(2),
            8 => Some(4),
            _ => None,
        },
        attn_direct: (tpr == 8).then_some(1024),
        // The last run's attn_combine loads 8 slices' partials at once (`combine_ahead`, off
        // by default): its contexts past 1,024 keys merge there.
        combine_ahead: Some(tpr == 8),
        // The next pre-norm fused into the residual mat-vec where it applies (off by default).
        fuse_norm: Some(true),
        // MoE experts in the last run at 2 rows a group of lanes where dense weights take 3
        // (their gate and up then fuse the activation: 8 rows a workgroup divide 256).
        moe_rows: (tpr == 8).then_some(2),
        // Decode norms of 512 invocations in the last run (a 2,304-wide row in two
        // workgroups, the second partial).
        decode_norm_wg: (tpr == 8).then_some(512),
        ..Default::default()
    })
    .expect("a Vulkan device with the validation layer (CI installs lavapipe and vulkan-validationlayers)");
    eprintln!(
        "device: {} ({}), {tpr} threads per row, integer dots {int_dot} (device: {}), CPU-style attention {cpu_attention}, decode mat-vec {decode:?}, K-quants {kquant:?} × (pieces, passes, pair) {pieces:?}",
        b.device().name,
        b.device().driver_info,
        b.device().integer_dot_product
    );
    // ZINC_CONFORMANCE_FILTER=text runs only the cases whose name contains it (debugging).
    let filter = std::env::var("ZINC_CONFORMANCE_FILTER").ok();
    let results = run(&b, &Tolerance::exact_f32(), filter.as_deref()).expect("suite");
    for r in &results {
        eprintln!(
            "{:>6.3} {} {} {}",
            r.worst,
            if r.ok { "ok  " } else { "FAIL" },
            r.name,
            if r.ok { "" } else { &r.detail }
        );
    }
    let failed: Vec<_> = results.iter().filter(|r| !r.ok).collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases failed: {failed:#?}",
        failed.len(),
        results.len()
    );
    if filter.is_none() {
        assert!(results.len() > 60, "only {} cases ran", results.len());
    }
    let device = (b.device().name.clone(), b.device().subgroup_size);
    drop(b);
    assert_eq!(
        validation_errors(),
        0,
        "the validation layer reported errors (printed above)"
    );
    device
}
