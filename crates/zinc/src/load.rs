//! Loading a model for the commands that run one: the file, the backend, the tokenizer.
//!
//! The backend is chosen at run time (`--backend cpu|vulkan|auto`); commands are written once,
//! generic over `Backend`, and [`with_engine!`] picks the instantiation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use zinc_backend::cpu::CpuBackend;
use zinc_backend::Backend;
use zinc_engine::Engine;
use zinc_gguf::GgufModel;
use zinc_tokenizer::Tokenizer;
use zinc_vulkan::{DeviceKind, VulkanBackend, VulkanOptions};

/// Options every model-running command shares.
#[derive(clap::Args, Clone, Debug)]
pub struct ModelArgs {
    /// The GGUF model (any shard of a split model).
    #[arg(short, long)]
    pub model: PathBuf,
    /// Worker threads of the CPU backend (default: all cores).
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Backend: `cpu`, `vulkan`, or `auto` (a Vulkan GPU when there is one, else the CPU).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Vulkan device index (see `zinc check`); default: the best one.
    #[arg(long)]
    pub device: Option<usize>,
    /// Run Vulkan with the Khronos validation layer (slow; for debugging).
    #[arg(long, hide = true)]
    pub vulkan_validation: bool,
    /// Time every GPU kernel with timestamps (`zinc bench` prints the breakdown).
    #[arg(long)]
    pub profile: bool,
    /// Vulkan mat-vec threads per weight row (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_threads_per_row: Option<u32>,
    /// Vulkan integer-dot mat-vecs (`false` keeps the float kernels; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_int_dot: Option<bool>,
    /// Vulkan cooperative-matrix prompt mat-mul (`false` keeps the integer-dot kernel).
    #[arg(long, hide = true)]
    pub vk_coopmat: Option<bool>,
    /// Vulkan integer-dot threads per row on prompts (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_prompt_threads_per_row: Option<u32>,
    /// Vulkan decode mat-vec, `TPRxNRxWG`: threads per row, rows per group of them,
    /// workgroup size (kernel tuning).
    #[arg(long, hide = true, value_parser = parse_triple)]
    pub vk_decode_matvec: Option<(u32, u32, u32)>,
    /// Vulkan decode mat-vec of Q4_K/Q6_K weights, `LPRxNRxWG` (kernel tuning; 0x0x0: the
    /// generic one).
    #[arg(long, hide = true, value_parser = parse_triple)]
    pub vk_decode_kquant: Option<(u32, u32, u32)>,
    /// Vulkan decode mat-vec of Q6_K weights only, `LPRxNRxWG` (kernel tuning).
    #[arg(long, hide = true, value_parser = parse_triple)]
    pub vk_decode_q6k: Option<(u32, u32, u32)>,
    /// Vulkan decode mat-vec of Q4_K/Q6_K weights: 16-byte pieces of a block per lane, 1, 2
    /// or 4 (kernel tuning; default 2 for Q4_K, 1 for Q6_K).
    #[arg(long, hide = true)]
    pub vk_decode_pieces: Option<u32>,
    /// Vulkan K-quant decode mat-vec: passes whose loads a lane issues before their math, 1, 2
    /// or 4 (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_decode_passes: Option<u32>,
    /// Vulkan Q4_K decode mat-vec at 2 pieces a lane: a lane's pieces one pair of sub-blocks
    /// (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_decode_pair: Option<bool>,
    /// Vulkan decode attention: about this many key slices at long contexts (kernel tuning;
    /// default 16).
    #[arg(long, hide = true)]
    pub vk_attn_slices: Option<u32>,
    /// Vulkan decode attention's workgroup size: 128 or 256 (kernel tuning; default 128).
    #[arg(long, hide = true)]
    pub vk_attn_wg: Option<u32>,
    /// Vulkan decode attention: keys each invocation loads at once, 2, 4 or 8 (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_attn_ahead: Option<u32>,
    /// Vulkan decode steps' q/k preparation: RoPE's cos and sin from the host (kernel
    /// comparisons; default on).
    #[arg(long, hide = true)]
    pub vk_attn_rope_table: Option<bool>,
    /// Vulkan decode attention over one slice: its output quantized in chunks of 32 for a
    /// K-quant out-projection, a query head a workgroup (kernel comparisons; default on).
    #[arg(long, hide = true)]
    pub vk_attn_x32: Option<bool>,
    /// Vulkan decode attention, timing only (wrong results): parts left out, bits 1 q/k norms,
    /// 2 RoPE, 4 scores, 8 values, 16 the output's quantization.
    #[arg(long, hide = true, default_value_t = 0)]
    pub vk_attn_ablate: u32,
    /// Vulkan decode attention: query heads a workgroup over split keys, 1, 2, 4 or 8 (kernel
    /// tuning; default 1).
    #[arg(long, hide = true)]
    pub vk_attn_heads: Option<u32>,
    /// Vulkan decode attention: up to this many keys in one slice, no merge dispatch (kernel
    /// tuning; default 128).
    #[arg(long, hide = true)]
    pub vk_attn_direct: Option<u32>,
    /// Vulkan decode steps' RMSNorm workgroup: 64, 128, 256 or 512 (kernel comparisons;
    /// default 256).
    #[arg(long, hide = true)]
    pub vk_norm_wg: Option<u32>,
    /// Vulkan MoE decode: the experts' down-projection and their weighted sum in one dispatch
    /// (kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_moe_fused_down: Option<bool>,
    /// Vulkan decode: the next RMSNorm computed by the residual add's mat-vec (kernel
    /// comparisons).
    #[arg(long, hide = true)]
    pub vk_fuse_norm: Option<bool>,
    /// Vulkan decode: the gated activation computed by the gate and up mat-vecs (kernel
    /// comparisons).
    #[arg(long, hide = true)]
    pub vk_fuse_glu: Option<bool>,
    /// Vulkan decode: the gate and up mat-vecs in one dispatch, each workgroup quantizing its
    /// own 32 rows' activation (kernel tuning; default on).
    #[arg(long, hide = true)]
    pub vk_glu_rows: Option<bool>,
    /// Vulkan decode: rows of the gate and of the up a group of lanes takes under
    /// `--vk-glu-rows` (1, 2 or 4; kernel tuning).
    #[arg(long, hide = true)]
    pub vk_glu_rows_nr: Option<u32>,
    /// Vulkan decode: the q/k norms, RoPE and K/V store done by the decode attention itself
    /// (kernel tuning; default on).
    #[arg(long, hide = true)]
    pub vk_fuse_prep: Option<bool>,
    /// Vulkan decode: early weights — q/k/v, o, gate/up and the head recorded beside their
    /// input's producer,
    /// loading their weights while it runs (kernel tuning; NVIDIA and CPU devices only).
    #[arg(long, hide = true)]
    pub vk_early_weights: Option<bool>,
    /// Vulkan decode, early weights: the consumers that wait (bits: 1 q/k/v, 2 out-projection,
    /// 4 gate/up, 8 head; kernel tuning; default 15).
    #[arg(long, hide = true)]
    pub vk_early_mask: Option<u32>,
    /// Vulkan decode, early weights: 32-byte pieces each invocation loads before it waits
    /// (kernel tuning; default 8).
    #[arg(long, hide = true)]
    pub vk_early_touch: Option<u32>,
    /// Vulkan MoE decode: rows a group of lanes in the experts' mat-vecs (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_moe_rows: Option<u32>,
    /// Vulkan MoE decode: lanes a group of rows in the experts' mat-vecs, `GATEUPxDOWN`
    /// (kernel tuning).
    #[arg(long, hide = true, value_parser = parse_pair)]
    pub vk_moe_lanes: Option<(u32, u32)>,
    /// Vulkan MoE decode: passes whose loads a lane issues before their math in the experts'
    /// mat-vecs, `GATEUPxDOWN` (kernel tuning).
    #[arg(long, hide = true, value_parser = parse_pair)]
    pub vk_moe_passes: Option<(u32, u32)>,
    /// Vulkan MoE decode: invocations a workgroup of the experts' gate and up mat-vecs in the
    /// activation's tail, with `--vk-glu-rows false` (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_moe_wg: Option<u32>,
    /// Vulkan MoE decode: the router's mat-vec also routes (kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_router_routes: Option<bool>,
    /// Vulkan MoE decode: the router normalizes its input itself, beside the norm (kernel
    /// comparisons).
    #[arg(long, hide = true)]
    pub vk_router_norm: Option<bool>,
    /// Vulkan MoE decode, timing only (wrong picks): 1, the router's ranking left out (experts
    /// 0..k−1); 2, its counter too; 3, as 1 with the picks scattered over the experts; 4,
    /// ranked, then experts 0..k−1 written; 5, the logits read by plain loads; 6, stand-in
    /// logits, no loads; 7, as 6 without the acquiring barrier.
    #[arg(long, hide = true, default_value_t = 0)]
    pub vk_router_stop: u32,
    /// Vulkan MoE decode: the routing router's workgroup, 64 or 128 (kernel tuning).
    #[arg(long, hide = true)]
    pub vk_router_wg: Option<u32>,
    /// Vulkan prompts' f32 mat-vecs (an MoE router): tokens a workgroup column, 1–8 (kernel
    /// tuning).
    #[arg(long, hide = true)]
    pub vk_matvec_tokens: Option<u32>,
    /// Vulkan prompts: q/k norms, RoPE and K/V store a subgroup a head (default `true`;
    /// `false`: a workgroup a head; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_prep_rows: Option<bool>,
    /// Vulkan prompts: rounded activations' block maxima by subgroup shuffles (default `true`;
    /// `false`: a shared-memory tree; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_act_quant_sg: Option<bool>,
    /// Vulkan prompts: mat-muls of one rounded input (k and v after q, up after gate) beside
    /// each other, no barrier between (default `true`; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_mm_beside: Option<bool>,
    /// Vulkan prompts: the gated activation computed by its rounding's dispatch (default
    /// `true`; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_glu_round: Option<bool>,
    /// Vulkan prompts: the pre-norm computed with its projections' rounding (default `true`;
    /// kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_norm_round: Option<bool>,
    /// Vulkan MoE routing: every expert ranked in one pass (`false`: a round per pick; kernel
    /// comparisons).
    #[arg(long, hide = true)]
    pub vk_route_rank: Option<bool>,
    /// Vulkan MoE decode: the router that normalizes its input itself recorded before the norm
    /// beside it, so it starts first (`false`: after it; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_router_first: Option<bool>,
    /// Vulkan decode: two mat-vecs of one K-quant format reading the same input (q and k) in
    /// one dispatch (`false`: one each; kernel comparisons).
    #[arg(long, hide = true)]
    pub vk_decode_two: Option<bool>,
    /// Vulkan: commands in the first piece of a recording sent to the GPU, and in each later
    /// one, `FIRSTxEVERY` (kernel tuning; default 8x512).
    #[arg(long, hide = true, value_parser = parse_pair)]
    pub vk_chunks: Option<(u32, u32)>,
    /// Vulkan: each later piece of a recording this many times the one before (default 4).
    #[arg(long, hide = true)]
    pub vk_chunk_growth: Option<u32>,
    /// Vulkan: each piece of a recording signals a fence of its own (default true).
    #[arg(long, hide = true)]
    pub vk_piece_fences: Option<bool>,
    /// Vulkan: a piece of a recording also goes once the device has finished the ones before
    /// (default true).
    #[arg(long, hide = true)]
    pub vk_chunk_adaptive: Option<bool>,
    /// Vulkan: adaptive pieces read the last piece's fence at most once in this many µs (0:
    /// at every command; default 4).
    #[arg(long, hide = true)]
    pub vk_adaptive_poll_us: Option<u32>,
    /// Vulkan: the host polls the device's fences instead of sleeping on them (default: on
    /// GPUs, off on CPU devices).
    #[arg(long, hide = true)]
    pub vk_spin_wait: Option<bool>,
    /// Vulkan: each decode step recorded while the device runs the one before, and submitted
    /// whole (default: on).
    #[arg(long, hide = true)]
    pub vk_step_ahead: Option<bool>,
    /// Vulkan, timing only: this many empty dependent stages before every barrier (what a
    /// stage costs on its own is the slope).
    #[arg(long, hide = true, default_value_t = 0)]
    pub vk_pad_stages: u32,
    /// Vulkan: what the driver compiled each kernel to (registers, shared memory, …; needs
    /// VK_KHR_pipeline_executable_properties), printed after a bench.
    #[arg(long, hide = true)]
    pub vk_pipeline_stats: bool,
    /// Vulkan: each workgroup's start and end on the device's clock (needs VK_KHR_shader_clock;
    /// the instrumented kernels run a little slower). `zinc bench` then prints where a
    /// generated token's time goes, stage by stage: between the stages, while their
    /// workgroups start, and inside them.
    #[arg(long)]
    pub vk_clock: bool,
    /// Vulkan decode attention: the last workgroup of a KV head merges its slices (kernel
    /// comparisons; default: a dispatch of its own merges them).
    #[arg(long, hide = true)]
    pub vk_attn_merge: Option<bool>,
    /// Vulkan decode attention: keys and values in one pass, a running softmax a key slot
    /// (kernel comparisons; default: over every slice).
    #[arg(long, hide = true)]
    pub vk_attn_one_pass: Option<bool>,
    /// Vulkan decode attention over split slices: each key read once for this many of its KV
    /// head's query heads (0 for none, 1, 2, 4 or 8), by invocations holding whole pieces of it
    /// (kernel comparisons; default: none).
    #[arg(long, hide = true)]
    pub vk_attn_rows: Option<u32>,
    /// Vulkan decode attention reading each key once: keys an invocation loads a pass (2 or 4;
    /// kernel comparisons; default: 2).
    #[arg(long, hide = true)]
    pub vk_attn_rows_keys: Option<u32>,
    /// Vulkan decode attention over split slices on cooperative matrices, a KV head's query
    /// heads a workgroup: 1 a softmax a subgroup, 2 blocks of 64 keys a workgroup (kernel
    /// comparisons; default: 0, off).
    #[arg(long, hide = true)]
    pub vk_attn_cm: Option<u32>,
    /// Vulkan split attention's merge loading 8 slices' partials at once (kernel comparisons;
    /// default: off).
    #[arg(long, hide = true)]
    pub vk_combine_ahead: Option<bool>,
    /// Vulkan decode attention in the CPU's arithmetic (default: on CPU devices only).
    #[arg(long, hide = true)]
    pub vk_cpu_attention: Option<bool>,
    /// Vulkan: kernels left out, by profile name, comma-separated: what a run gains without
    /// them is what they cost (timing only: the results are wrong); or a barrier mode,
    /// `barrier`, `barrier-exec` or `barrier-read` (what the barriers cost); or `record`
    /// (nothing reaches the driver: `zinc bench`'s recording time is the host's own part).
    #[arg(long, hide = true, value_delimiter = ',')]
    pub vk_skip: Vec<String>,
    /// Vulkan prompts: quantized weights dequantized to f16 rows before the mat-mul (kernel
    /// comparisons).
    #[arg(long, hide = true)]
    pub vk_prompt_f16: Option<bool>,
    /// Vulkan: MiB of device memory for f16 copies of quantized weights that speed up prompts
    /// (default: half the memory on discrete GPUs of 64 GiB or more, a quarter on other GPUs of
    /// 32 GiB or more, else none).
    #[arg(long)]
    pub vk_prompt_cache_mb: Option<u64>,
    /// Vulkan cooperative-matrix tile, `SGMxBK[xSGN]` (kernel tuning): SGM 1 or 2, BK 32 or 64,
    /// SGN (token subgroups: 16·TM·SGN tokens a tile, TM from `--vk-coopmat-tm`) 2 or 4.
    #[arg(long, hide = true, value_parser = parse_tile)]
    pub vk_coopmat_tile: Option<(u32, u32, u32)>,
    /// Vulkan cooperative-matrix mat-mul: 16-token accumulator tiles a subgroup, 2 or 4 (kernel
    /// tuning).
    #[arg(long, hide = true)]
    pub vk_coopmat_tm: Option<u32>,
    /// Vulkan MoE prompts' cooperative-matrix mat-mul: accumulator tiles along slots (kernel
    /// tuning).
    #[arg(long, hide = true)]
    pub vk_moe_tm: Option<u32>,
    /// Vulkan MoE prompts' cooperative-matrix tile, `SGMxBKxSGN` (kernel tuning).
    #[arg(long, hide = true, value_parser = parse_tile)]
    pub vk_moe_tile: Option<(u32, u32, u32)>,
}

fn parse_triple(s: &str) -> Result<(u32, u32, u32), String> {
    let v: Vec<u32> = s
        .split('x')
        .map(|p| p.parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| "expected AxBxC, e.g. 16x2x128".to_string())?;
    match v[..] {
        [a, b, c] => Ok((a, b, c)),
        _ => Err("expected AxBxC, e.g. 16x2x128".into()),
    }
}

fn parse_pair(s: &str) -> Result<(u32, u32), String> {
    match s
        .split_once('x')
        .map(|(a, b)| (a.parse::<u32>(), b.parse::<u32>()))
    {
        Some((Ok(a), Ok(b))) => Ok((a, b)),
        _ => Err("expected AxB, e.g. 16x64".into()),
    }
}

fn parse_tile(s: &str) -> Result<(u32, u32, u32), String> {
    let parts: Vec<&str> = s.split('x').collect();
    let bad = || "expected SGMxBK or SGMxBKxSGN, e.g. 2x64 or 2x64x4".to_string();
    if !(2..=3).contains(&parts.len()) {
        return Err(bad());
    }
    let num = |i: usize| parts.get(i).map(|p| p.parse::<u32>().map_err(|_| bad()));
    let m = num(0).unwrap_or_else(|| Err(bad()))?;
    let k = num(1).unwrap_or_else(|| Err(bad()))?;
    let n = num(2).unwrap_or(Ok(4))?;
    if !(1..=2).contains(&m) || !(k == 32 || k == 64) || !(n == 2 || n == 4) {
        return Err("SGM is 1 or 2, BK 32 or 64, SGN 2 or 4".into());
    }
    Ok((m, k, n))
}

/// Backend options without a model (`zinc selftest`).
#[derive(clap::Args, Clone, Debug)]
pub struct ModelArgsLite {
    /// Backend: `cpu` or `vulkan` (`auto`: a Vulkan GPU when there is one, else the CPU).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Vulkan device index (see `zinc check`).
    #[arg(long)]
    pub device: Option<usize>,
    /// Run Vulkan with the Khronos validation layer.
    #[arg(long)]
    pub vulkan_validation: bool,
    /// Vulkan prompts: weights dequantized to f16 rows first (kernel checks).
    #[arg(long, hide = true)]
    pub vk_prompt_f16: Option<bool>,
    /// Vulkan cooperative-matrix tile, `SGMxBK[xSGN]` (kernel checks).
    #[arg(long, hide = true, value_parser = parse_tile)]
    pub vk_coopmat_tile: Option<(u32, u32, u32)>,
    /// Vulkan cooperative-matrix mat-mul: accumulator tiles along tokens (kernel checks).
    #[arg(long, hide = true)]
    pub vk_coopmat_tm: Option<u32>,
    /// Vulkan MoE cooperative-matrix mat-mul: accumulator tiles along slots (kernel checks).
    #[arg(long, hide = true)]
    pub vk_moe_tm: Option<u32>,
    /// Vulkan decode: the next RMSNorm computed by the residual add's mat-vec (kernel checks).
    #[arg(long, hide = true)]
    pub vk_fuse_norm: Option<bool>,
    /// Vulkan decode: the gated activation computed by the gate and up mat-vecs (kernel checks).
    #[arg(long, hide = true)]
    pub vk_fuse_glu: Option<bool>,
    /// Vulkan decode: the gate and up mat-vecs in one dispatch, each workgroup quantizing its
    /// own 32 rows' activation (kernel checks).
    #[arg(long, hide = true)]
    pub vk_glu_rows: Option<bool>,
    /// Vulkan decode: the q/k norms, RoPE and K/V store done by the decode attention itself
    /// (kernel checks).
    #[arg(long, hide = true)]
    pub vk_fuse_prep: Option<bool>,
    /// Vulkan decode: early weights (kernel checks).
    #[arg(long, hide = true)]
    pub vk_early_weights: Option<bool>,
    /// Vulkan decode, early weights: the consumers that wait (kernel checks).
    #[arg(long, hide = true)]
    pub vk_early_mask: Option<u32>,
    /// Vulkan decode, early weights: 32-byte pieces each invocation loads before it waits
    /// (kernel checks).
    #[arg(long, hide = true)]
    pub vk_early_touch: Option<u32>,
    /// Vulkan MoE prompts' cooperative-matrix tile, `SGMxBKxSGN` (kernel checks).
    #[arg(long, hide = true, value_parser = parse_tile)]
    pub vk_moe_tile: Option<(u32, u32, u32)>,
    /// Vulkan decode attention: query heads a workgroup (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_heads: Option<u32>,
    /// Vulkan decode attention: keys in one directly written slice, at most (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_direct: Option<u32>,
    /// Vulkan decode attention: slices merged in place (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_merge: Option<bool>,
    /// Vulkan decode attention: keys and values in one pass (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_one_pass: Option<bool>,
    /// Vulkan decode attention: each key read once for this many query heads (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_rows: Option<u32>,
    /// Vulkan decode attention reading each key once: keys an invocation a pass (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_rows_keys: Option<u32>,
    /// Vulkan decode attention on cooperative matrices, its form (kernel checks).
    #[arg(long, hide = true)]
    pub vk_attn_cm: Option<u32>,
    /// Vulkan split attention's merge loading 8 slices' partials at once (kernel comparisons;
    /// default: off).
    #[arg(long, hide = true)]
    pub vk_combine_ahead: Option<bool>,
    /// Vulkan prompts: q/k norms, RoPE and K/V store a subgroup a head (kernel checks).
    #[arg(long, hide = true)]
    pub vk_prep_rows: Option<bool>,
    /// Vulkan prompts: rounded activations' block maxima by subgroup shuffles (kernel checks).
    #[arg(long, hide = true)]
    pub vk_act_quant_sg: Option<bool>,
    /// Vulkan prompts: mat-muls of one rounded input beside each other (kernel checks).
    #[arg(long, hide = true)]
    pub vk_mm_beside: Option<bool>,
    /// Vulkan prompts: the gated activation in its rounding's dispatch (kernel checks).
    #[arg(long, hide = true)]
    pub vk_glu_round: Option<bool>,
    /// Vulkan prompts: the pre-norm with its projections' rounding (kernel checks).
    #[arg(long, hide = true)]
    pub vk_norm_round: Option<bool>,
    /// Vulkan: kernels left out or barriers reduced (`--vk-skip barrier-exec`: whether the
    /// results stay right without memory barriers), or `record`: nothing reaches the driver, so
    /// `zinc bench`'s recording time is the host's own part (results wrong; timing only).
    #[arg(long, hide = true, value_delimiter = ',')]
    pub vk_skip: Vec<String>,
}

/// `choose` for commands without a model.
pub fn choose_backend(a: &ModelArgsLite) -> Result<BackendChoice> {
    choose(&ModelArgs {
        model: PathBuf::new(),
        threads: None,
        backend: a.backend.clone(),
        device: a.device,
        vulkan_validation: a.vulkan_validation,
        profile: false,
        vk_threads_per_row: None,
        vk_int_dot: None,
        vk_coopmat: None,
        vk_prompt_threads_per_row: None,
        vk_decode_matvec: None,
        vk_decode_kquant: None,
        vk_decode_pieces: None,
        vk_decode_passes: None,
        vk_decode_pair: None,
        vk_decode_q6k: None,
        vk_attn_slices: None,
        vk_attn_wg: None,
        vk_attn_ahead: None,
        vk_attn_rope_table: None,
        vk_attn_x32: None,
        vk_attn_ablate: 0,
        vk_attn_heads: a.vk_attn_heads,
        vk_attn_direct: a.vk_attn_direct,
        vk_norm_wg: None,
        vk_moe_fused_down: None,
        vk_fuse_norm: a.vk_fuse_norm,
        vk_fuse_glu: a.vk_fuse_glu,
        vk_glu_rows: a.vk_glu_rows,
        vk_glu_rows_nr: None,
        vk_fuse_prep: a.vk_fuse_prep,
        vk_early_weights: a.vk_early_weights,
        vk_early_mask: a.vk_early_mask,
        vk_early_touch: a.vk_early_touch,
        vk_moe_rows: None,
        vk_moe_lanes: None,
        vk_moe_passes: None,
        vk_moe_wg: None,
        vk_router_routes: None,
        vk_router_norm: None,
        vk_router_stop: 0,
        vk_router_wg: None,
        vk_matvec_tokens: None,
        vk_prep_rows: a.vk_prep_rows,
        vk_act_quant_sg: a.vk_act_quant_sg,
        vk_mm_beside: a.vk_mm_beside,
        vk_glu_round: a.vk_glu_round,
        vk_norm_round: a.vk_norm_round,
        vk_route_rank: None,
        vk_router_first: None,
        vk_decode_two: None,
        vk_chunks: None,
        vk_chunk_growth: None,
        vk_piece_fences: None,
        vk_chunk_adaptive: None,
        vk_adaptive_poll_us: None,
        vk_spin_wait: None,
        vk_step_ahead: None,
        vk_pad_stages: 0,
        vk_pipeline_stats: false,
        vk_clock: false,
        vk_attn_merge: a.vk_attn_merge,
        vk_attn_one_pass: a.vk_attn_one_pass,
        vk_attn_rows: a.vk_attn_rows,
        vk_attn_rows_keys: a.vk_attn_rows_keys,
        vk_attn_cm: a.vk_attn_cm,
        vk_combine_ahead: a.vk_combine_ahead,
        vk_cpu_attention: None,
        vk_skip: a.vk_skip.clone(),
        vk_coopmat_tile: a.vk_coopmat_tile,
        vk_coopmat_tm: a.vk_coopmat_tm,
        vk_moe_tm: a.vk_moe_tm,
        vk_moe_tile: a.vk_moe_tile,
        vk_prompt_f16: a.vk_prompt_f16,
        vk_prompt_cache_mb: None,
    })
}

/// The backend a command runs on, resolved from `--backend`.
pub enum BackendChoice {
    Cpu,
    Vulkan(Box<VulkanOptions>),
}

/// An engine on whichever backend was chosen (one per process: its size does not matter).
#[allow(clippy::large_enum_variant)]
pub enum AnyEngine {
    Cpu(Engine<CpuBackend>),
    Vulkan(Engine<VulkanBackend>),
}

/// Runs `$body` with `$e` bound to the engine, whatever its backend (the one place that knows
/// the list of backends).
#[macro_export]
macro_rules! with_engine {
    ($any:expr, $e:ident => $body:expr) => {
        match $any {
            $crate::load::AnyEngine::Cpu($e) => $body,
            $crate::load::AnyEngine::Vulkan($e) => $body,
        }
    };
}

/// Sets the size of the worker pool once, before any work runs.
pub fn init_threads(threads: Option<usize>) -> Result<()> {
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("cannot set up the worker threads")?;
    }
    Ok(())
}

pub fn open_file(path: &PathBuf) -> Result<Arc<GgufModel>> {
    Ok(Arc::new(GgufModel::open(path)?))
}

/// Resolves `--backend`: `auto` takes Vulkan when a usable GPU is present (a software device
/// such as lavapipe is slower than the CPU backend) and says why when it does not.
pub fn choose(args: &ModelArgs) -> Result<BackendChoice> {
    let vk = VulkanOptions {
        device: args.device,
        validation: args.vulkan_validation,
        threads_per_row: args.vk_threads_per_row,
        int_dot: args.vk_int_dot,
        coopmat: args.vk_coopmat,
        prompt_threads_per_row: args.vk_prompt_threads_per_row,
        decode_matvec: args.vk_decode_matvec,
        decode_kquant: args.vk_decode_kquant,
        decode_pieces: args.vk_decode_pieces,
        decode_passes: args.vk_decode_passes,
        decode_pair: args.vk_decode_pair,
        decode_q6k: args.vk_decode_q6k,
        attn_slices: args.vk_attn_slices,
        attn_wg: args.vk_attn_wg,
        attn_ahead: args.vk_attn_ahead,
        attn_rope_table: args.vk_attn_rope_table,
        attn_x32: args.vk_attn_x32,
        attn_ablate: args.vk_attn_ablate,
        attn_heads: args.vk_attn_heads,
        attn_direct: args.vk_attn_direct,
        decode_norm_wg: args.vk_norm_wg,
        moe_fused_down: args.vk_moe_fused_down,
        fuse_norm: args.vk_fuse_norm,
        fuse_glu: args.vk_fuse_glu,
        glu_rows: args.vk_glu_rows,
        glu_rows_nr: args.vk_glu_rows_nr,
        fuse_prep: args.vk_fuse_prep,
        early_weights: args.vk_early_weights,
        early_mask: args.vk_early_mask,
        early_touch: args.vk_early_touch,
        moe_rows: args.vk_moe_rows,
        moe_lanes: args.vk_moe_lanes,
        moe_passes: args.vk_moe_passes,
        moe_wg: args.vk_moe_wg,
        router_routes: args.vk_router_routes,
        router_norm: args.vk_router_norm,
        router_stop: args.vk_router_stop,
        router_wg: args.vk_router_wg,
        matvec_tokens: args.vk_matvec_tokens,
        prep_rows: args.vk_prep_rows,
        act_quant_sg: args.vk_act_quant_sg,
        mm_beside: args.vk_mm_beside,
        glu_round: args.vk_glu_round,
        norm_round: args.vk_norm_round,
        route_general: false,
        route_rank: args.vk_route_rank,
        router_first: args.vk_router_first,
        decode_two: args.vk_decode_two,
        submit_chunks: args.vk_chunks,
        submit_growth: args.vk_chunk_growth,
        piece_fences: args.vk_piece_fences,
        submit_adaptive: args.vk_chunk_adaptive,
        adaptive_poll_us: args.vk_adaptive_poll_us,
        spin_wait: args.vk_spin_wait,
        step_ahead: args.vk_step_ahead,
        pad_stages: args.vk_pad_stages,
        pipeline_stats: args.vk_pipeline_stats,
        clock: args.vk_clock,
        attn_merge: args.vk_attn_merge,
        attn_one_pass: args.vk_attn_one_pass,
        attn_rows: args.vk_attn_rows,
        attn_rows_keys: args.vk_attn_rows_keys,
        attn_cm: args.vk_attn_cm,
        combine_ahead: args.vk_combine_ahead,
        cpu_attention: args.vk_cpu_attention,
        coopmat_tile: args.vk_coopmat_tile,
        coopmat_tm: args.vk_coopmat_tm,
        moe_tm: args.vk_moe_tm,
        moe_tile: args.vk_moe_tile,
        prompt_f16: args.vk_prompt_f16,
        prompt_weight_cache_mb: args.vk_prompt_cache_mb,
        profile: args.profile,
        skip_kernels: args.vk_skip.clone(),
    };
    match args.backend.as_str() {
        "cpu" => Ok(BackendChoice::Cpu),
        "vulkan" => Ok(BackendChoice::Vulkan(Box::new(vk))),
        "auto" => {
            if args.device.is_some() {
                return Ok(BackendChoice::Vulkan(Box::new(vk)));
            }
            match zinc_vulkan::list_devices() {
                Ok((devices, Some(i))) if devices[i].kind != DeviceKind::Cpu => {
                    Ok(BackendChoice::Vulkan(Box::new(vk)))
                }
                Ok(_) => Ok(BackendChoice::Cpu),
                Err(e) => {
                    eprintln!("zinc: Vulkan is not available ({e}); running on the CPU");
                    Ok(BackendChoice::Cpu)
                }
            }
        }
        other => bail!("unknown backend {other:?} (choose cpu, vulkan or auto)"),
    }
}

/// Builds the engine of an opened model on backend `b`; reports the load time on stderr.
pub fn build<B: Backend + 'static>(
    b: B,
    args: &ModelArgs,
    file: Arc<GgufModel>,
) -> Result<Engine<B>> {
    let t0 = Instant::now();
    let tokenizer = Tokenizer::from_metadata(file.metadata())
        .with_context(|| format!("{}: cannot build the tokenizer", args.model.display()))?;
    let model = zinc_models::load(&b, file.clone())
        .with_context(|| format!("cannot load {}", args.model.display()))?;
    eprintln!(
        "zinc: loaded {} ({}, {} layers) on {} in {:.2} s",
        args.model.display(),
        model.hparams().arch,
        model.hparams().n_layer,
        b.name(),
        t0.elapsed().as_secs_f64()
    );
    Ok(Engine::new(b, model, tokenizer))
}

pub fn cpu_backend(args: &ModelArgs) -> Result<CpuBackend> {
    init_threads(args.threads)?;
    Ok(CpuBackend::new())
}

pub fn vulkan_backend(opts: &VulkanOptions) -> Result<VulkanBackend> {
    VulkanBackend::new(opts).context("cannot start the Vulkan backend")
}

/// Refuses `--vk-clock` for a command that never reads the clock (`zinc bench` does): its log
/// of dispatches would only grow.
pub fn no_clock(args: &ModelArgs, command: &str) -> Result<()> {
    if args.vk_clock {
        anyhow::bail!("--vk-clock is for zinc bench, not zinc {command}");
    }
    Ok(())
}

/// Loads model and tokenizer on the chosen backend. The mapped file comes back too, for callers
/// that need more of its metadata (chat template, sizes).
pub fn engine(args: &ModelArgs) -> Result<(AnyEngine, Arc<GgufModel>)> {
    let file = open_file(&args.model)?;
    Ok((engine_from(args, file.clone())?, file))
}

/// Builds the engine for an already-opened model file.
pub fn engine_from(args: &ModelArgs, file: Arc<GgufModel>) -> Result<AnyEngine> {
    Ok(match choose(args)? {
        BackendChoice::Cpu => AnyEngine::Cpu(build(cpu_backend(args)?, args, file)?),
        BackendChoice::Vulkan(o) => AnyEngine::Vulkan(build(vulkan_backend(&o)?, args, file)?),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_tile;

    #[test]
    fn tiles_parse_with_and_without_token_subgroups() {
        assert_eq!(parse_tile("2x64"), Ok((2, 64, 4)));
        assert_eq!(parse_tile("1x32x2"), Ok((1, 32, 2)));
        for bad in ["", "2", "2x", "3x64", "2x48", "2x64x3", "2x64x4x1", "ax64"] {
            assert!(parse_tile(bad).is_err(), "{bad:?} parsed");
        }
    }
}
