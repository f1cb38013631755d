//! `Backend` on Vulkan: weights uploaded once in their GGUF layout, activations in pooled
//! device buffers, every op a recorded dispatch. Work is submitted only when a value must come
//! back to the host (`read`, `argmax`); long recordings go to the queue in pieces meanwhile.
//! Mixture-of-experts FFNs live in `moe.rs`.
//!
//! Ordering: a barrier is recorded before every command to the commands since the last one
//! (`Recorder::order`), so commands run in recording order. That is what lets a dropped tensor's
//! buffer go straight back to the pool and be reused by a later command of the same submission.
//! The one exception: mat-vecs reading the same cached quantized input, each writing its own
//! fresh output, run without barriers between them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use ash::vk;
use zinc_backend::{
    AttnParams, Backend, BackendError, GateUp, GatedAct, MoeWeights, RopeParams, RopeStyle,
};
use zinc_gguf::{GgmlType, GgufModel};

use crate::context::{Buffer, Context, FastMap, Memory, Push, Spec};
use crate::device::{self, Instance};
use crate::VulkanError;

mod attention;
mod clock;
mod matvec;
mod moe;
mod ops;
mod options;
mod quant;
mod recorder;
mod tuning;
use moe::MOE_CM_TILE;
pub use options::VulkanOptions;
pub use recorder::SPAN;
use recorder::{BarrierAblation, Pool, Recorder, STAGING_BYTES};
use tuning::Tuning;

/// How the CPU's dot product (and llama.cpp's) sees activations next to `ty` weights, as
/// (act_quant/quant_act mode, block): 1 = Q8_0/Q8_1 blocks of 32, 2 = Q8_K blocks of 256,
/// 3 = f16, 4 = bf16 rounding. `None`: f32 as is.
fn act_mode(ty: GgmlType) -> Option<(u32, usize)> {
    use GgmlType as T;
    Some(match ty {
        T::F32 => return None,
        T::F16 => (3, 1),
        T::BF16 => (4, 1),
        T::Q4_0 | T::Q5_0 | T::Q8_0 | T::IQ4_NL | T::MXFP4 | T::Q4_1 | T::Q5_1 => (1, 32),
        _ => (2, 256),
    })
}

/// Which fast kernels a device gets (what `zinc check` reports and the backend uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelPlan {
    /// Quantized products on integer dot products (`matvecq.comp`): shaderIntegerDotProduct
    /// and subgroup shuffles.
    pub int_dot: bool,
    /// Prompts on cooperative matrices (`matmul_cm.comp`): 16×16×16 f16 → f32 and subgroups
    /// of 32.
    pub coopmat: bool,
}

pub fn kernel_plan(info: &crate::DeviceInfo) -> KernelPlan {
    KernelPlan {
        int_dot: info.integer_dot_product && info.subgroup_shuffle,
        coopmat: info.cooperative_matrix && info.subgroup_size == 32,
    }
}

/// Counters for tests and profiling.
#[derive(Debug, Default)]
pub struct Stats {
    /// Submits the host waited for (round trips; a step recorded ahead counts when its result
    /// is waited for); long recordings also go to the device in pieces that are not waited for
    /// one by one, and are not counted here.
    pub submits: AtomicU64,
    pub readback_bytes: AtomicU64,
}

/// The shader variant of a per-format kernel (`matvec_Q4_K`, …): names are `'static` because the
/// pipeline cache is keyed by them.
fn variant(kernel: &'static str, ty: GgmlType) -> &'static str {
    // Keyed by where `kernel` lies, not its text (a hash of integers at every command); the
    // same text at two places leaks two equal names, a few bytes each.
    type Names = FastMap<(usize, usize, u32), &'static str>;
    static NAMES: Mutex<Option<Names>> = Mutex::new(None);
    let mut m = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let map = m.get_or_insert_with(FastMap::default);
    map.entry((kernel.as_ptr() as usize, kernel.len(), ty.id()))
        .or_insert_with(|| Box::leak(format!("{kernel}_{}", ty.name()).into_boxed_str()))
}

/// Above this many keys, a single-token attention splits the keys across workgroups even where
/// it would otherwise follow the CPU's arithmetic (`cpu_attention`).
const SPLIT_KV: usize = 512;
/// Keys per slice: at least this many, and at most `MAX_SPLITS` slices.
const SPLIT_LEN: usize = 64;
const MAX_SPLITS: usize = 128;
/// attn_dec.comp's slices at long contexts, about (`VulkanOptions::attn_slices`: with a query
/// head a workgroup, 16 measured ahead of 32 on the H200 — more workgroups do not pay for
/// merging more partials; on the H100 12 measured the same as 16, session 29).
const ATTN_DEC_SLICES: usize = 16;
/// Kernels whose outputs index other data (expert ids): left out, later kernels could read out
/// of bounds, so they are never skipped, nor counted for an ablation.
pub(crate) const NEVER_SKIPPED: [&str; 3] = ["moe_route", "moe_sort", "router_routed"];

/// The ablation name that records nothing (`Recorder::dry`): a step's host time without the
/// driver's command calls.
const DRY: &str = "record";

/// `Backend::ablation`'s state.
struct Ablation {
    /// Kernels left out of every recording, by profile name or a name's first word.
    skip: Vec<String>,
    /// Dispatches by profile name since the counts were last cleared.
    counts: HashMap<&'static str, u64>,
}

/// What one dependent stage costs (`VulkanBackend::sync_costs`), by the device's clock.
#[derive(Clone, Debug)]
pub struct SyncCosts {
    /// µs a stage: a pipeline barrier between empty one-workgroup dispatches.
    pub barrier_us: f64,
    /// Per workgroup count, µs a barrier inside one dispatch whose workgroups wait for each
    /// other; `None` where they did not all meet.
    pub grid_us: Vec<(u32, Option<f64>)>,
    /// The host's µs to record one command into a command buffer, by what it records (the
    /// driver's side of a decode step's recording, which the host's gap between tokens is
    /// mostly made of): a dispatch alone; with 80 bytes of push constants; after a barrier
    /// too; and switching between two pipelines too.
    pub record_us: Vec<(&'static str, f64)>,
    /// The host's µs (medians over the rounds) to submit a command buffer of one empty
    /// dispatch, and from that submit's return to the host seeing its fence signal: what a
    /// decode step's first piece costs beyond its recording, and the device's side of the
    /// round trip.
    pub submit_us: f64,
    pub fence_us: f64,
}

/// `VulkanBackend::matvec_costs`: one weight's decode mat-vec as a dependent stage.
#[derive(Clone, Debug)]
pub struct MatvecCost {
    /// Workgroups of the mat-vec (and of the stream read beside it).
    pub groups: usize,
    /// The weight's bytes as the device holds them.
    pub bytes: u64,
    /// µs a stage: the mat-vec, and a dispatch that only reads its bytes.
    pub matvec_us: f64,
    pub read_us: f64,
}

/// Timing tools' clock (`sync_costs`, `matvec_costs`): two timestamps, and while it lives a
/// recording stays in one command buffer (the host's recording speed stays out of a span).
struct Timer {
    pool: vk::QueryPool,
    period: f64,
    mask: u64,
    /// The recorder's pieces before (`finish` puts them back).
    chunks: [u32; 3],
}

impl Timer {
    fn new(b: &VulkanBackend) -> Result<Timer, VulkanError> {
        let info = &b.ctx.info;
        if b.ctx.timestamp_bits == 0 || info.timestamp_period <= 0.0 {
            return Err(VulkanError::Unusable {
                name: info.name.clone(),
                why: "its compute queue writes no timestamps".into(),
            });
        }
        // SAFETY: a query pool of this device; destroyed in `finish` once the device is idle.
        let pool = unsafe {
            b.ctx.device.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(2),
                None,
            )?
        };
        let chunks = b.rec().set_chunks([u32::MAX, u32::MAX, 2]);
        Ok(Timer {
            pool,
            period: info.timestamp_period as f64,
            mask: b.ctx.timestamp_mask(),
            chunks,
        })
    }

    /// Nanoseconds between a timestamp before the commands `record` records and one after
    /// them, all in one command buffer (`record` must not submit).
    fn span_ns(&self, b: &VulkanBackend, record: &dyn Fn()) -> Result<f64, VulkanError> {
        let d = &b.ctx.device;
        {
            let mut rec = b.rec();
            rec.begin()?;
            // SAFETY: recording into the open command buffer; the pool has two queries.
            unsafe {
                d.cmd_reset_query_pool(rec.cb, self.pool, 0, 2);
                d.cmd_write_timestamp(rec.cb, vk::PipelineStageFlags::TOP_OF_PIPE, self.pool, 0);
            }
        }
        record();
        let mut rec = b.rec();
        rec.release()?; // a held dispatch goes before the end's timestamp
        rec.begin()?;
        // SAFETY: as above; the submit waits before the results are read.
        unsafe {
            d.cmd_write_timestamp(rec.cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, 1);
            rec.submit(&b.stats)?;
            let mut ticks = [0u64; 2];
            d.get_query_pool_results(
                self.pool,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )?;
            Ok((ticks[1].wrapping_sub(ticks[0]) & self.mask) as f64 * self.period)
        }
    }

    /// The recorder's pieces back as they were; the pool destroyed once the device is idle
    /// (on an error path a recorded command may still name it).
    fn finish(self, b: &VulkanBackend) -> Result<(), VulkanError> {
        b.rec().set_chunks(self.chunks);
        // SAFETY: nothing that used the pool can still run once the device is idle.
        unsafe {
            b.ctx.device.device_wait_idle()?;
            b.ctx.device.destroy_query_pool(self.pool, None);
        }
        Ok(())
    }
}

/// What attn_dec.comp's PREP needs beyond the attention: the raw keys and values of the row,
/// the q/k norms (where the model has them) and RoPE (`Backend::prep_attention`).
struct Prep<'a> {
    k: &'a VkTensor,
    v: &'a VkTensor,
    norms: (Option<&'a VkWeight>, Option<&'a VkWeight>),
    eps: f32,
    rope: &'a RopeParams,
    /// The queries scaled by this after RoPE (Gemma 3), as `Backend::scale` would.
    q_scale: Option<f32>,
}

/// Whether qk_prep.comp (or attn_dec.comp's PREP) takes these inputs: heads of an even
/// dimension up to 512, n_rot within it, norms of one head, a row a position.
#[allow(clippy::too_many_arguments)]
fn prep_fits(
    q: &VkTensor,
    k: &VkTensor,
    v: &VkTensor,
    norms: (Option<&VkWeight>, Option<&VkWeight>),
    head_dim: usize,
    positions: &[u32],
    rope: &RopeParams,
    kv_dim: usize,
) -> bool {
    let head_norm = |n: Option<&VkWeight>| {
        n.is_none_or(|w| w.dims.iter().product::<u64>() as usize == head_dim)
    };
    head_dim.is_multiple_of(2)
        && (2..=512).contains(&head_dim)
        && rope.n_rot <= head_dim
        && q.cols.is_multiple_of(head_dim)
        && k.cols == kv_dim
        && v.cols == kv_dim
        && kv_dim.is_multiple_of(head_dim)
        && q.rows == positions.len()
        && k.rows == q.rows
        && v.rows == q.rows
        && head_norm(norms.0)
        && head_norm(norms.1)
}

/// `ContextOverflow` for the first of `positions` past the cache.
fn fits_context(cache: &VkKvCache, positions: &[u32]) -> Result<(), BackendError> {
    match positions.iter().find(|&&p| p as usize >= cache.n_ctx) {
        Some(&pos) => Err(BackendError::ContextOverflow {
            pos: pos as usize,
            n_ctx: cache.n_ctx,
        }),
        None => Ok(()),
    }
}

/// An attention at `positions`: the last position, and the keys its last row reads (the window
/// where there is one).
fn attn_keys(positions: &[u32], p: &AttnParams) -> (usize, usize) {
    let max_pos = positions.iter().copied().max().unwrap_or(0) as usize;
    (
        max_pos,
        p.window.map_or(max_pos + 1, |w| w.min(max_pos + 1)),
    )
}

/// Counters of attn_dec.comp's merge: one per workgroup of a decode step's heads.
const ATTN_COUNTERS: usize = 4096;
/// Counters of matvec_dec.comp's FUSE: one per (token, 256-row block) of a decode step's rows.
const FUSE_COUNTERS: usize = 4096;
/// Counters of matvec.comp's ROUTE (one per token), after FUSE's in the same buffer.
const ROUTE_COUNTERS: usize = 64;
/// attn_dec.comp merges its slices itself up to this many of them (its MERGE_MAX: 16 there,
/// its `wexp` array twice as large in every variant, took attn_dec_prep from 47 to 58
/// registers on the H100, and Qwen3-8B tg64 at 4,096 tokens read 240.2 / 240.8 tok/s against
/// 258.6 / 259.2, session 29).
const MERGE_SPLITS: usize = 8;
/// Slots of the early-weights sync buffer (sync.glsl), used in turn: a slot comes round again
/// only after barriers have retired every earlier use of it.
const SYNC_SLOTS: u64 = 64;
/// Words of one slot (sync.glsl's SYNC_SLOT_WORDS).
const SYNC_SLOT_WORDS: u64 = 288;
/// The widest input an early-weights mat-vec stages (matvec_dec.comp's WAIT_COLS).
const WAIT_COLS: usize = 4096;

/// A producer recorded with a sync.glsl signal (early weights): the consumers recorded right
/// after it, reading its quantized output `q`, may go beside it and wait in the shader.
#[derive(Clone, Copy)]
struct Signal {
    /// The quants the producer writes (what a consumer's input must be).
    q: u64,
    /// The slot's address and this use's epoch.
    slot: u64,
    epoch: u32,
    /// The recorder's `ops` after the producer and each consumer since: another command in
    /// between ends the chance.
    ops: u64,
    /// The producer is the attention (else a norm).
    attention: bool,
}
/// The last activations quantized for the integer-dot mat-vec, kept for the next projection of
/// the same input (q, k and v share one; gate and up another). Valid while the recorder's `ops`
/// still equals `seq`: the mat-vecs that read it write only their own fresh outputs, and bump
/// `seq` past themselves.
struct QuantCache {
    x: u64,
    len: usize,
    mode: u32,
    seq: u64,
    /// A mat-vec has read it since it was written (behind a barrier): later mat-vecs of the
    /// same input with fresh outputs may run concurrently with that one.
    used: bool,
    /// The quants' and chunk floats' addresses: in `_keep`, or in `scale`'s side buffer.
    q: u64,
    s: u64,
    _keep: Option<(VkTensor, Option<VkTensor>)>,
    /// Quantized from a fused norm's `z`: its readers apply this scale (`matvec_dec.comp`'s RS).
    scale: Option<Arc<NormScale>>,
    /// Mode-1 chunks written for K-quant readers on `matvec_dec.comp` (`glu_rows`), which
    /// `quant_input_dec` lends them as they are (X32); other mode-1 quantizations (for Q8_0-style
    /// readers) stay theirs, and a K-quant reader quantizes afresh in Q8_K.
    x32: bool,
}

impl QuantCache {
    /// Whether this is `x`'s quantization in `mode` with no command recorded since (`ops`).
    fn holds(&self, x: &VkTensor, mode: u32, ops: u64) -> bool {
        self.x == x.key() && self.len == x.len() && self.mode == mode && self.seq == ops
    }
}

/// The MoE part of matvec_dec.comp's push constants (read with `MOE` = 1 or 2; with `MOE` 0
/// all zero but for early weights: a WAIT dispatch's slot in `ids`, epoch in `k` and touch
/// loads in `expert16`, a FUSE producer's slot in `scale` and epoch in `row0`): the slots' experts (`ids`, moe_route.comp's picks), the experts' output scales, the slots'
/// routing weights (the combining form, `MOE` = 2), an expert's stride in 16-byte units, picks
/// per token, whether each slot has an input row of its own, whether the scales apply, and the
/// first row of each expert's matrix.
#[derive(Default)]
pub(super) struct DecMoe {
    pub(super) ids: u64,
    pub(super) scale: u64,
    pub(super) wts: u64,
    pub(super) expert16: u32,
    pub(super) k: u32,
    pub(super) x_per_slot: bool,
    pub(super) has_scale: bool,
    pub(super) row0: u32,
}

/// The fused-norm part of matvec_dec.comp's push constants. FUSE (`fuse` set: this dispatch
/// also writes the next RMSNorm, see `FuseOut`): `nz` its `z`, `side` its quants, chunk floats
/// and partial sums one after another, `g` its weight, `cnt` the counters. RS (`rs` set): the
/// input is a deferred norm's `z`, `nz` that norm's partial sums (`cnt` under GROWS), `eps` its
/// epsilon.
#[derive(Clone, Copy, Default)]
pub(super) struct DecNorm {
    pub(super) nz: u64,
    pub(super) side: u64,
    pub(super) g: u64,
    pub(super) cnt: u64,
    pub(super) eps: f32,
    pub(super) fuse: bool,
    pub(super) rs: bool,
    /// GLU (`VulkanBackend::glu_fused`): the output is one half of a buffer of the gate rows
    /// then the up rows, `side` the activation's quants then chunk floats, `g` GELU's table,
    /// `cnt` the counters; the activation's output is `DecMoe::wts`. It may go with RS.
    pub(super) glu: bool,
    /// GLU: GELU (else SiLU).
    pub(super) gelu: bool,
    /// GLU: this is the up projection's dispatch (its output the buffer's second half).
    pub(super) up: bool,
    /// GLU: the activation's quantization mode (quant8.glsl).
    pub(super) mode: u32,
    /// GROWS (`VulkanBackend::glu_rows`): the gate and the up in one dispatch, `nz` the up's
    /// row 0 (of expert 0), `cnt` the up's expert scales where `up_scaled` or with RS the
    /// norm's partial sums (never both); the activation's output `DecMoe::wts`, its Q8_0-style
    /// chunks in `side`.
    pub(super) grows: bool,
    pub(super) up_scaled: bool,
    /// X32: the input's chunk scales are the chunks' own (mode 1 from GROWS).
    pub(super) x32: bool,
}

/// matvec.comp on a prompt's f32 rows (`VulkanBackend::matvec_f`, `VulkanOptions::matvec_tokens`
/// tokens a workgroup column): rows a workgroup.
const MATVEC_TOKEN_ROWS: u32 = 16;

/// matvec_dec.comp's NORM bit 5, WAIT: an early-weights consumer (see `Signal`).
const DEC_WAIT: u32 = 32;

/// matvec_dec.comp's NORM bit 4, X32 (`DecNorm::x32`), and bit 6, TWO: two weights' mat-vecs
/// in one dispatch.
const DEC_X32: u32 = 16;
const DEC_TWO: u32 = 64;

/// A decode mat-vec on matvec_dec.comp held back (`Recorder::hold`) so that the next one of the
/// same kernel and input may join it in one dispatch (TWO, `VulkanOptions::decode_two`): what
/// the joined dispatch takes from it, and the recorder's `ops` just after it.
pub(super) struct TwoFirst {
    shader: &'static str,
    spec: Spec,
    addrs: [u64; 4],
    dims: [u32; 5],
    norm: DecNorm,
    /// Its workgroups (row groups), and its rows' label.
    groups: usize,
    rows: usize,
    ops: u64,
}

impl DecNorm {
    /// matvec_dec.comp's NORM specialization constant: bit 0 FUSE, bit 1 RS, bit 2 GLU, bit 3
    /// GROWS, bit 4 X32.
    pub(super) fn spec(&self) -> u32 {
        self.fuse as u32
            | (self.rs as u32) << 1
            | (self.glu as u32) << 2
            | (self.grows as u32) << 3
            | (self.x32 as u32) << 4
    }

    /// RS for an input quantized with `scale` (none: plain input).
    pub(super) fn reading(scale: Option<&NormScale>) -> DecNorm {
        scale.map_or_else(DecNorm::default, |n| DecNorm {
            nz: n.parts(),
            eps: n.eps,
            rs: true,
            ..DecNorm::default()
        })
    }
}

/// matvec_dec.comp's push constants: the weight, the quantized input (`xq`, `xs`) and the
/// output, `moe`'s addresses (ids, scale, wts), `dims` = [ncols, nrows, row_bytes, ntok,
/// accumulate], `moe`'s scalars, then `norm`'s, with the flags (`DecNorm::spec` says which
/// of FUSE and RS the pipeline has).
pub(super) fn dec_push(addrs: [u64; 4], dims: [u32; 5], moe: &DecMoe, norm: &DecNorm) -> Push {
    let mut p = Push::new();
    for &a in addrs.iter().chain(&[moe.ids, moe.scale, moe.wts]) {
        p.a(a);
    }
    let flags = (moe.x_per_slot as u32) << 2
        | (moe.has_scale as u32) << 3
        | (norm.gelu as u32) << 4
        | (norm.up as u32) << 5
        | (norm.up_scaled as u32) << 6
        | norm.mode << 8;
    for &d in &dims {
        p.w(d);
    }
    p.w(moe.expert16)
        .w(moe.k)
        .w(moe.row0)
        .a(norm.nz)
        .a(norm.side)
        .a(norm.g)
        .a(norm.cnt)
        .f(norm.eps)
        .w(flags);
    p
}

/// The MoE slots of `VulkanBackend::glu_fused`: their experts (`ids`), the gate's and the up's
/// expert scales, the slots and picks per token.
pub(super) struct GluSlots {
    pub(super) ids: u64,
    pub(super) scales: [Option<u64>; 2],
    pub(super) nslots: usize,
    pub(super) k: usize,
}

/// matvec_dec.comp's MoE push constants of a gated FFN's gate (`i` 0) or up (1) on decode steps:
/// `moe`'s slots (the MOE 1 form; `None`: a dense weight), the activation into `wts`, experts of
/// `expert_bytes`, rows from `row0`.
fn glu_dec_moe(
    moe: Option<&GluSlots>,
    i: usize,
    wts: u64,
    expert_bytes: u64,
    row0: usize,
) -> DecMoe {
    match moe {
        Some(m) => DecMoe {
            ids: m.ids,
            scale: m.scales[i].unwrap_or(0),
            wts,
            expert16: (expert_bytes / 16) as u32,
            k: m.k as u32,
            x_per_slot: false,
            has_scale: m.scales[i].is_some(),
            row0: row0 as u32,
        },
        None => DecMoe {
            wts,
            ..DecMoe::default()
        },
    }
}

/// A fused RMSNorm being recorded (`VulkanBackend::fuse_begin`): its output, deferred, and the
/// producing dispatch's FUSE push constants.
struct FuseOut {
    h: VkTensor,
    norm: DecNorm,
    /// Early weights: the sync.glsl slot and epoch the dispatch signals once the norm is
    /// stored (`sync_begin`), for its readers recorded beside it.
    sync: Option<(u64, u32)>,
}

impl FuseOut {
    fn push(&self) -> DecNorm {
        self.norm
    }
}

/// `quant_input`'s answer: the quants' and chunk floats' addresses, whether an earlier mat-vec
/// read them already, and the scale to apply (see there).
type QuantIn = (u64, u64, bool, Option<Arc<NormScale>>);

/// The last activations rounded for the f32 and cooperative-matrix kernels (`dot_input`),
/// kept for the next projection of the same input while the recorder's `ops` equals `seq`.
struct RoundCache {
    x: u64,
    len: usize,
    mode: u32,
    /// f16 pairs (for the cooperative-matrix mat-mul) rather than f32.
    half: bool,
    seq: u64,
    out: VkTensor,
    /// A mat-mul has read it since it was made, with nothing but such mat-muls recorded since:
    /// a later reader writing a fresh output may go beside them.
    used: bool,
    /// Pool buffers its readers read, held until it is replaced (`keep_with_rounding`): the
    /// next rounding's command comes after a barrier.
    keep: Vec<VkTensor>,
}

/// What a fused RMSNorm (`matmul_add_norm`) leaves beside its `z`, for `n` values: `side`
/// holds their quants (n bytes), chunk floats (n / 2 bytes) and then, per (row, 256-value
/// block), the block's sum of squares as a double-float (hi, lo) pair (dfloat.glsl's
/// `parts_scale`: the scale still to apply, with `eps`).
pub(super) struct NormScale {
    side: VkTensor,
    n: usize,
    eps: f32,
}

impl NormScale {
    fn quants(&self) -> u64 {
        self.side.key()
    }

    fn chunks(&self) -> u64 {
        self.side.key() + self.n as u64
    }

    fn parts(&self) -> u64 {
        self.side.key() + (3 * self.n / 2) as u64
    }
}

/// Activations on the device: `rows × cols` f32, row-major.
pub struct VkTensor {
    buf: Option<Buffer>,
    pool: Arc<Pool>,
    rows: usize,
    cols: usize,
    /// The buffer holds a fused RMSNorm's `z = x ⊙ w`, each row still to be multiplied by its
    /// scale (`VulkanBackend::settle`); readers that apply the scale themselves use `key`.
    deferred: Mutex<Option<Arc<NormScale>>>,
    /// `deferred` is `Some`: read on every `addr` without taking the lock.
    is_deferred: AtomicBool,
}

impl VkTensor {
    fn buffer(&self) -> &Buffer {
        self.buf.as_ref().expect("a live tensor has its buffer")
    }

    /// The address of values ready to read: a deferred norm must be settled first.
    fn addr(&self) -> u64 {
        assert!(
            !self.is_deferred(),
            "a fused norm's output read before its scale was applied"
        );
        self.buffer().address
    }

    /// The buffer's address whatever it holds (identity, and readers of a deferred norm).
    fn key(&self) -> u64 {
        self.buffer().address
    }

    fn is_deferred(&self) -> bool {
        self.is_deferred.load(Ordering::Acquire)
    }

    fn norm_scale(&self) -> Option<Arc<NormScale>> {
        self.deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn len(&self) -> usize {
        self.rows * self.cols
    }
}

impl Drop for VkTensor {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            self.pool.put(b);
        }
    }
}

/// A weight in its GGUF layout on the device (1-D weights as f32).
pub struct VkWeight {
    /// Unique for the backend's life (keys the f16 copies of `VulkanBackend::f16_rows`).
    id: u64,
    buf: Buffer,
    /// The type of the bytes on the device.
    ty: GgmlType,
    dims: Vec<u64>,
    row_bytes: u64,
    model: Arc<GgufModel>,
    index: usize,
}

impl VkWeight {
    fn cols(&self) -> usize {
        self.dims.first().copied().unwrap_or(1) as usize
    }

    fn rows(&self) -> usize {
        self.dims.get(1).copied().unwrap_or(1) as usize
    }

    /// Rows of every matrix of the tensor (an expert tensor's experts after one another).
    fn all_rows(&self) -> usize {
        self.dims.iter().skip(1).product::<u64>() as usize
    }
}

/// K and V of every layer as f16 pairs, `n_ctx × kv_dim` each.
pub struct VkKvCache {
    n_ctx: usize,
    dims: Vec<usize>,
    k: Vec<Buffer>,
    v: Vec<Buffer>,
    /// Pending work may write the cache (a prompt cancelled between batches): it is submitted
    /// before the buffers are freed.
    rec: Arc<Mutex<Recorder>>,
    stats: Arc<Stats>,
}

impl Drop for VkKvCache {
    fn drop(&mut self) {
        let mut r = self.rec.lock().unwrap_or_else(|e| e.into_inner());
        let _ = r.submit(&self.stats);
    }
}

/// matvec_dec.comp's constant 4 (`pbx`: pieces in bits 0–3, passes less one in bits 4–7, PAIR
/// in bit 8) with `passes` passes, its pieces and PAIR kept.
fn with_passes(pbx: u32, passes: u32) -> u32 {
    (pbx & !0xF0) | (passes - 1) << 4
}

/// Whether an ablation's entry `name` names the kernel `label`: the label, or its first word
/// (a mat-vec's shader without its shape).
fn names_kernel(name: &str, label: &str) -> bool {
    label == name || label.split(' ').next() == Some(name)
}

/// A decode RMSNorm as norm_quant.comp recorded it: `out` = norm(`src`) with weight `w` and
/// epsilon `eps` over rows of `cols`, its sums as a workgroup of `wg` invocations makes them,
/// the recorder's `ops` just after it.
#[derive(Clone, Copy)]
pub(super) struct NormOrigin {
    out: u64,
    pub(super) src: u64,
    w: u64,
    eps: f32,
    cols: usize,
    wg: u32,
    ops: u64,
}

pub struct VulkanBackend {
    ctx: Arc<Context>,
    /// The options resolved for this device (every default applied).
    tune: Tuning,
    /// Kept f16 rows of quantized weights, by weight id, and the bytes they may still take
    /// (see [`VulkanOptions::prompt_weight_cache_mb`]).
    f16_rows: Mutex<FastMap<u64, Buffer>>,
    f16_budget: AtomicU64,
    next_weight_id: AtomicU64,
    qcache: Mutex<Option<QuantCache>>,
    rcache: Mutex<Option<RoundCache>>,
    /// The last decode norm recorded by norm_quant.comp (`rms_norm_into`), for an MoE router
    /// recorded right after it that normalizes its own input beside it (matvec.comp's SN).
    last_norm: Mutex<Option<NormOrigin>>,
    /// The decode mat-vec held last that the next may join (`VulkanOptions::decode_two`).
    two: Mutex<Option<TwoFirst>>,

    /// The activation mode (`act_mode`) the last quantized mat-vec asked for: kernels that end
    /// in a mat-vec's input (RMSNorm, gated activations) quantize their output that way too.
    last_mode: std::sync::atomic::AtomicU32,
    /// The mode of the last prompt rounding `dot_input_used` made (0: none yet): a prompt's
    /// pre-norm rounds its output that way too with `VulkanOptions::norm_round`.
    last_round_mode: std::sync::atomic::AtomicU32,
    /// `attn_x32`: the chunk floats' address of the last decode attention output quantized in
    /// chunks of 32 for a K-quant reader, and whether such an output was ever quantized afresh
    /// by its reader (one not on matvec_dec: a Q5_K or Q3_K out-projection, a width
    /// matvec_dec does not take). After that the attention quantizes in Q8_K blocks again.
    attn_x32_at: AtomicU64,
    attn_x32_refused: AtomicBool,
    /// `zinc_backend::cpu::gelu_f16_table()` on the device (GeGLU follows the CPU bit for bit).
    gelu_table: Buffer,
    /// attn_dec.comp's merge counters (`ATTN_COUNTERS` words, zero between dispatches).
    attn_count: Buffer,
    /// matvec_dec.comp's FUSE counters (`FUSE_COUNTERS` words, zero between dispatches), then
    /// matvec.comp's ROUTE counters (`ROUTE_COUNTERS`).
    fuse_count: Buffer,
    /// sync.glsl's slots (`SYNC_SLOTS` of `SYNC_SLOT_WORDS` words, zeroed once) and the last
    /// epoch handed out; the producer recorded last with a signal.
    sync: Buffer,
    sync_epoch: std::sync::atomic::AtomicU32,
    signal: Mutex<Option<Signal>>,
    /// The RoPE tables last made for a decode row (`rope_words`), newest last: every layer of a
    /// step asks for the same position's, under one rotation's parameters or (Gemma 3's local
    /// and global layers) two.
    rope_cache: Mutex<Vec<RopeTable>>,
    /// GPU timestamps are on (`VulkanOptions::profile`).
    profiling: bool,
    /// The clocked kernels' record buffer (`VulkanOptions::clock`), and a host buffer to read
    /// it through.
    clock: Option<Buffer>,
    clock_read: Mutex<Option<Buffer>>,
    /// Kernels left out and kernels counted (`VulkanOptions::skip_kernels`,
    /// `Backend::ablation`); `ablating` says whether to look.
    ablating: AtomicBool,
    ablation: Mutex<Ablation>,
    rec: Arc<Mutex<Recorder>>,
    pool: Arc<Pool>,
    stats: Arc<Stats>,
}

/// The workgroup size of prompts' RMSNorms over groups of `group` values: about eight values an
/// invocation (64 to 512, within the device). Decode steps' take `DECODE_NORM_WG` (or the
/// options' `decode_norm_wg`) in rms_norm.comp and in the kernels that must agree with it to
/// the bit: norm_quant.comp, which spreads a row over workgroups that each sum it whole, and
/// qk_prep.comp.
fn norm_wg(group: usize, max_workgroup: u32) -> u32 {
    let most = pow2_workgroup(max_workgroup).min(512);
    ((group / 8).next_power_of_two() as u32).clamp(64, most)
}

/// The largest power-of-two workgroup within the device's (Vulkan guarantees 128), at least 64.
fn pow2_workgroup(max_workgroup: u32) -> u32 {
    1u32 << (31 - max_workgroup.max(64).leading_zeros())
}

/// matvec_dec.comp's PAIR bit in its constant 4. The MoE forms go without it (H200, Qwen3-30B-A3B
/// tg128 with it in them too: 253.1 / 255.2 tok/s against 257.8 / 257.5 before pairs).
pub(super) const DEC_PAIR: u32 = 256;

/// Q4_K decode mat-vecs of fewer rows take one row a group of lanes at the default shape, two
/// from here up (H200, `zinc matvec-cost`: 1,024 × 4,096 4.93 µs at one row, 6.26 at two).
const DEC_NR2_ROWS: usize = 4096;

/// Q6_K decode mat-vecs of this many rows or more (output heads) take two rows a group of lanes
/// at the default shape, where every other Q6_K weight takes one (H200, `zinc matvec-cost`,
/// Qwen3-8B: the 151,936 × 4,096 head 127.19 µs at two rows against 136.01 at one, with the
/// 4,096 × 12,288 down-projection 19.64 against 17.29 and the 1,024 × 4,096 v 7.66 against 5.98).
const DEC_HEAD_ROWS: usize = 65536;

/// MoE decode steps: lanes a group of rows in the experts' gate and up mat-vecs
/// (`VulkanOptions::moe_lanes`).
const MOE_GATE_UP_LANES: u32 = 16;

/// MoE decode steps: invocations of a down-projection workgroup, a group of lanes a slot, where
/// `VulkanOptions::moe_lanes` leaves its lanes to them.
const MOE_DOWN_WG: u32 = 64;

/// `nop.comp`'s one workgroup (timing tools' empty stages): a single invocation.
const NOP_SPEC: Spec = [1, 0, 0, 0, 0, 0];

/// Decode steps' RMSNorm workgroup (`VulkanOptions::decode_norm_wg`).
const DECODE_NORM_WG: u32 = 256;
/// The MoE router that routes: invocations a workgroup by default (`VulkanOptions::router_wg`).
const ROUTER_WG: u32 = 128;

/// Shared memory of `matmul_cm.comp` with `sgn`·`sgm` subgroups and `bk` columns a step: the
/// f16 activation (16·tm·sgn tokens) and weight (64·sgm rows) tiles of bk + 8 halves a row, a
/// 16×16 f32 staging tile per subgroup, and two words a token. Rows whose length bk does not
/// divide take bk = 32.
fn cm_shared_bytes(sgm: u32, bk: u32, sgn: u32, tm: u32) -> u32 {
    let tokens = 16 * tm * sgn;
    (tokens + 64 * sgm) * (bk + 8) * 2 + sgn * sgm * 1024 + tokens * 8
}

/// The block an activation quantization mode quantizes in: 1, Q8_0-style chunks of 32; 2,
/// Q8_K blocks of 256; `None` for any other mode.
fn mode_block(mode: u32) -> Option<usize> {
    match mode {
        1 => Some(32),
        2 => Some(256),
        _ => None,
    }
}

/// Tokens (or MoE slots) a `matmul_cm.comp` workgroup of `wg` invocations takes: 16·TM per
/// subgroup column, SGN = wg / 32 / sgm of them.
fn cm_tile_tokens(wg: u32, sgm: u32, tm: u32) -> usize {
    (wg / sgm / 32 * 16 * tm) as usize
}

/// Float weight formats (the quantized ones have integer-dot and dequantizing kernels).
fn is_float(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
}

/// Shared memory of `attn_fa.comp` for heads of `hd`: K and V tiles of 32 keys × (hd + 8)
/// halves, 4 × 16 × 36 f32 scores, two 4 × 16 × 40 f16 weight tiles, 64 row factors and four
/// words.
fn attn_fa_shared_bytes(hd: usize) -> usize {
    2 * 32 * (hd + 8) * 2 + 4 * 16 * 36 * 4 + 2 * 4 * 16 * 40 * 2 + 64 * 4 + 16
}

/// Q6_K blocks on the device are kept in groups of [`Q6_K_GROUP`] a row: the group's
/// [`Q6_K_GROUP`] scales `d` (f16, zero-filled past a short last group) in one 16-byte vector,
/// then each block's other 208 bytes (ql, qh, scales: 13 vectors) as GGUF has them. Every part
/// starts 16-byte aligned, so the mat-vecs read whole vectors, and a full group takes 8 × 210
/// bytes: nothing is added but at a row's short last group (16 bytes), where blocks padded to
/// 224 bytes each took 6.7% more memory and bandwidth. `dequant.glsl` reads this layout.
const Q6_K_GROUP: usize = 8;
/// A Q6_K block's bytes on the device after its `d`.
const Q6_K_BODY: usize = 208;

/// Bytes of a device row of `nblocks` Q6_K blocks (a multiple of 16).
fn q6k_row_bytes(nblocks: usize) -> usize {
    let (full, rest) = (nblocks / Q6_K_GROUP, nblocks % Q6_K_GROUP);
    full * (16 + Q6_K_GROUP * Q6_K_BODY) + if rest > 0 { 16 + rest * Q6_K_BODY } else { 0 }
}

/// A weight's bytes as the kernels read them, and the bytes of one row: the GGUF layout, except
/// Q6_K's rows regrouped as [`Q6_K_GROUP`] says.
fn device_layout(
    ty: GgmlType,
    cols: u64,
    bytes: std::borrow::Cow<'_, [u8]>,
) -> (u64, std::borrow::Cow<'_, [u8]>) {
    let row_bytes = ty.row_bytes(cols).unwrap_or(0);
    if ty != GgmlType::Q6_K || row_bytes == 0 {
        return (row_bytes, bytes);
    }
    use rayon::prelude::*;
    let block = ty.type_size();
    let nblocks = (cols / ty.block_size() as u64) as usize;
    let (src_row, dst_row) = (row_bytes as usize, q6k_row_bytes(nblocks));
    let rows = bytes.len() / src_row;
    // Rows across the host's threads (a 30B MoE file holds ~8 GB of Q6_K).
    let mut out = vec![0u8; rows * dst_row];
    out.par_chunks_mut(dst_row)
        .zip(bytes.par_chunks_exact(src_row))
        .for_each(|(dst, src)| {
            for (dg, sg) in dst
                .chunks_mut(16 + Q6_K_GROUP * Q6_K_BODY)
                .zip(src.chunks(Q6_K_GROUP * block))
            {
                for (j, b) in sg.chunks_exact(block).enumerate() {
                    dg[2 * j..2 * j + 2].copy_from_slice(&b[Q6_K_BODY..block]);
                    dg[16 + j * Q6_K_BODY..16 + (j + 1) * Q6_K_BODY]
                        .copy_from_slice(&b[..Q6_K_BODY]);
                }
            }
        });
    (dst_row as u64, out.into())
}

/// A grid of `x` columns (tokens, tiles) by `row_groups`, the row group y + z·65535 (kernels
/// read it as `gl_WorkGroupID.y + gl_WorkGroupID.z * 65535u`).
fn grid(x: usize, row_groups: usize) -> [u32; 3] {
    [
        x as u32,
        row_groups.min(65535) as u32,
        row_groups.div_ceil(65535) as u32,
    ]
}

/// A 1-D grid of `n` workgroups folded into x ≤ 65535 and z (`wg_linear()` in the shaders).
fn fold(n: usize) -> [u32; 3] {
    const MAX: usize = 65535;
    if n <= MAX {
        [n as u32, 1, 1]
    } else {
        [MAX as u32, 1, n.div_ceil(MAX) as u32]
    }
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A failure inside an op: the trait's ops are infallible, and a device that fails mid-step
/// (lost, out of memory) cannot give a correct answer, so this stops with the reason.
fn fatal(e: VulkanError) -> ! {
    panic!("vulkan: {e}")
}

impl VulkanBackend {
    pub fn new(opts: &VulkanOptions) -> Result<VulkanBackend, VulkanError> {
        let instance = Instance::new(opts.validation)?;
        let devices = instance.devices()?;
        let infos: Vec<_> = devices.iter().map(|(_, d)| d.clone()).collect();
        let i = device::pick(&infos, opts.device)?;
        let (pdev, info) = devices[i].clone();
        if opts.pipeline_stats && !info.pipeline_stats {
            return Err(VulkanError::Unusable {
                name: info.name.clone(),
                why: "pipeline statistics asked for, but the device has no \
                      VK_KHR_pipeline_executable_properties"
                    .into(),
            });
        }
        if opts.clock && !info.shader_clock {
            return Err(VulkanError::Unusable {
                name: info.name.clone(),
                why: "the kernels' clock asked for, but the device has no VK_KHR_shader_clock \
                      with both the subgroup's and the device's clock"
                    .into(),
            });
        }
        let ctx = Context::new(instance, pdev, info, opts.pipeline_stats, opts.clock)?;
        let clock_buf = if opts.clock {
            let words = clock::HEADER_WORDS + clock::RECORDS as usize * clock::RECORD_WORDS;
            let b = ctx.buffer(4 * words as u64, Memory::Device)?;
            if !ctx.set_clock(b.address, clock::RECORDS) {
                return Err(VulkanError::Shader(
                    "the clock was set after the first pipeline".into(),
                ));
            }
            Some(b)
        } else {
            None
        };
        let t = Tuning::resolve(opts, &ctx.info)?;
        let table = f32s(zinc_backend::cpu::gelu_f16_table());
        let gelu_table = ctx.buffer(table.len() as u64, Memory::Device)?;
        let mut rec = Recorder::new(&ctx, opts.profile, t.chunks)?;
        if let Some(b) = &clock_buf {
            // The count (records are read only below it).
            rec.fill_zero(b.buffer, 4 * clock::HEADER_WORDS as u64)?;
            rec.clock_log = Some(Vec::new());
        }
        // Barrier modes (timing) apart from the kernels an ablation leaves out.
        rec.loose = BarrierAblation::of(&opts.skip_kernels)?;
        rec.spin = t.spin_wait;
        rec.piece_fences = t.piece_fences;
        rec.adaptive = t.submit_adaptive;
        rec.poll_every = t.adaptive_poll;
        if t.pad_stages > 0 {
            rec.pad = (t.pad_stages, ctx.pipeline("nop", NOP_SPEC)?);
        }
        let skip: Vec<String> = (opts.skip_kernels.iter())
            .filter(|n| !BarrierAblation::names_one(n) && *n != DRY)
            .cloned()
            .collect();
        let attn_count = ctx.buffer(4 * ATTN_COUNTERS as u64, Memory::Device)?;
        rec.fill_zero(attn_count.buffer, attn_count.size)?;
        let fuse_count = ctx.buffer(4 * (FUSE_COUNTERS + ROUTE_COUNTERS) as u64, Memory::Device)?;
        rec.fill_zero(fuse_count.buffer, fuse_count.size)?;
        let sync = ctx.buffer(4 * SYNC_SLOTS * SYNC_SLOT_WORDS, Memory::Device)?;
        rec.fill_zero(sync.buffer, sync.size)?;
        rec.dry = opts.skip_kernels.iter().any(|n| n == DRY);
        let b = VulkanBackend {
            sync,
            sync_epoch: Default::default(),
            signal: Mutex::new(None),
            f16_rows: Mutex::new(FastMap::default()),
            f16_budget: AtomicU64::new(t.f16_budget),
            next_weight_id: AtomicU64::new(0),
            qcache: Mutex::new(None),
            rcache: Mutex::new(None),
            last_mode: Default::default(),
            last_round_mode: Default::default(),
            attn_x32_at: Default::default(),
            attn_x32_refused: Default::default(),
            gelu_table,
            attn_count,
            fuse_count,
            last_norm: Mutex::new(None),
            two: Mutex::new(None),
            rope_cache: Mutex::new(Vec::new()),

            profiling: opts.profile,
            clock: clock_buf,
            clock_read: Mutex::new(None),
            tune: t,
            ablating: (!skip.is_empty()).into(),
            ablation: Mutex::new(Ablation {
                skip,
                counts: HashMap::new(),
            }),
            rec: Arc::new(Mutex::new(rec)),
            pool: Arc::new(Pool {
                ctx: ctx.clone(),
                free: Mutex::new(FastMap::default()),
            }),
            ctx,
            stats: Arc::new(Stats::default()),
        };
        b.upload_to(&b.gelu_table, &table)?;
        Ok(b)
    }

    /// Copies `bytes` into a device buffer: directly when it is mapped, else through staging.
    fn upload_to(&self, buf: &Buffer, bytes: &[u8]) -> Result<(), VulkanError> {
        if buf.is_mapped() {
            buf.write(0, bytes);
        } else {
            let mut rec = self.rec();
            rec.submit(&self.stats)?;
            let staging = self
                .ctx
                .buffer(STAGING_BYTES.min(bytes.len() as u64), Memory::Host)?;
            for (i, chunk) in bytes.chunks(staging.size as usize).enumerate() {
                staging.write(0, chunk);
                rec.copy(
                    staging.buffer,
                    0,
                    buf.buffer,
                    i as u64 * staging.size,
                    chunk.len() as u64,
                )?;
                rec.submit(&self.stats)?;
            }
        }
        Ok(())
    }

    /// The work recorded since the last call as the kernels' clock saw it (`VulkanOptions::
    /// clock`; `None` without it): waits for the device, reads the records, places them in
    /// the stages (backend/clock.rs) and empties the buffer for the next call.
    pub fn clock_step(&self) -> Result<Option<zinc_backend::ClockStep>, VulkanError> {
        let Some(buf) = &self.clock else {
            return Ok(None);
        };
        let mut rec = self.rec();
        rec.release()?; // a held dispatch's entry in this step's log
        let log = rec.clock_log.replace(Vec::new()).unwrap_or_default();
        let expected: u64 = (log.iter().filter(|d| d.kind.is_some()))
            .map(|d| d.groups)
            .sum();
        let n = expected.min(clock::RECORDS as u64) as usize;
        let bytes = 4 * (clock::HEADER_WORDS + n * clock::RECORD_WORDS) as u64;
        let mut read = self.clock_read.lock().unwrap_or_else(|e| e.into_inner());
        if read.as_ref().is_none_or(|b| b.size < bytes) {
            *read = None; // the smaller one freed first
            *read = Some(self.ctx.buffer(bytes.next_power_of_two(), Memory::Host)?);
        }
        let host = read.as_ref().expect("just made");
        rec.copy(buf.buffer, 0, host.buffer, 0, bytes)?;
        rec.before_host_read();
        rec.fill_zero(buf.buffer, 4 * clock::HEADER_WORDS as u64)?;
        rec.submit(&self.stats)?;
        let mut raw = vec![0u8; bytes as usize];
        host.read_into(0, &mut raw);
        let words: Vec<u32> = (raw.chunks_exact(4))
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let (counted, recs) = clock::records(&words);
        Ok(Some(clock::place(&log, recs, counted)))
    }

    /// `clock_step` without reading the records: the log emptied and the buffer zeroed once
    /// the work so far has run. False without the clock.
    pub fn clock_reset(&self) -> Result<bool, VulkanError> {
        let Some(buf) = &self.clock else {
            return Ok(false);
        };
        let mut rec = self.rec();
        rec.release()?;
        rec.clock_log = Some(Vec::new());
        rec.fill_zero(buf.buffer, 4 * clock::HEADER_WORDS as u64)?;
        rec.submit(&self.stats)?;
        Ok(true)
    }

    /// The compiled statistics of every pipeline created so far (`VulkanOptions::
    /// pipeline_stats`): a line per pipeline, its shader, its specialization constants and the
    /// driver's figures; `None` unless asked for.
    pub fn pipeline_stats(&self) -> Result<Option<Vec<String>>, VulkanError> {
        Ok(self.ctx.pipeline_statistics()?.map(|all| {
            all.into_iter()
                .map(|((name, spec), stats)| {
                    let figures: Vec<String> =
                        stats.iter().map(|(k, v)| format!("{k} {v}")).collect();
                    format!("{name} {spec:?}: {}", figures.join(", "))
                })
                .collect()
        }))
    }

    pub fn device(&self) -> &crate::DeviceInfo {
        &self.ctx.info
    }

    /// Timing only (`zinc sync-cost`): what one dependent stage costs by the device's clock,
    /// as a pipeline barrier between empty one-workgroup dispatches (`nop.comp`), and as a
    /// barrier inside one dispatch of each of `groups` workgroup counts whose workgroups wait
    /// for each other on a counter (`gridsync.comp`, polling it at most `spin_limit` times a
    /// wait; `None` where they did not all meet — Vulkan does not promise a dispatch's
    /// workgroups are resident at once). Each measurement is one command buffer between two
    /// timestamps (the host's recording speed stays out of it), each figure the difference
    /// between `rounds` stages and one, per stage.
    pub fn sync_costs(
        &self,
        rounds: u32,
        groups: &[u32],
        spin_limit: u32,
    ) -> Result<SyncCosts, VulkanError> {
        let rounds = rounds.max(2);
        let nop = self.ctx.pipeline("nop", NOP_SPEC)?;
        let grid = self.ctx.pipeline("gridsync", [64, 0, 0, 0, 0, 0])?;
        let timer = Timer::new(self)?;
        let time = |record: &dyn Fn()| timer.span_ns(self, record);
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        // `n` empty dispatches, each after a barrier on the one before.
        let nops = |n: u32| {
            move || {
                let mut rec = self.rec();
                for _ in 0..n {
                    rec.order(None, false, compute);
                    rec.dispatch_raw(nop, [1, 1, 1], None);
                }
            }
        };
        let result = (|| {
            let many = time(&nops(rounds))?;
            let one = time(&nops(1))?;
            let barrier_us = (many - one) / 1e3 / (rounds - 1) as f64;
            let mut grid_us = Vec::new();
            for &g in groups {
                // One dispatch of g workgroups meeting `r` times: its time, and whether the
                // counters say they all met every time.
                let sync = |r: u32| -> Result<(f64, bool), VulkanError> {
                    let cnt = self.tensor_from(&[0.0; 4], 1, 4);
                    let mut push = Push::new();
                    push.a(cnt.addr()).w(r).w(spin_limit);
                    let ns = time(&|| {
                        // After the counters' upload.
                        let mut rec = self.rec();
                        rec.order(None, false, compute);
                        rec.dispatch_raw(grid, [g, 1, 1], Some(&push));
                    })?;
                    let words: Vec<u32> = self.read(&cnt).iter().map(|v| v.to_bits()).collect();
                    Ok((ns, words[2] == 0 && words[1] == r))
                };
                let (many, ok_many) = sync(rounds)?;
                let (one, ok_one) = sync(1)?;
                let us = (ok_many && ok_one).then(|| (many - one) / 1e3 / (rounds - 1) as f64);
                grid_us.push((g, us));
            }
            // The host's time to record commands (in the open command buffer, timed around the
            // loop only), per command.
            let other = self.ctx.pipeline("nop", [2, 0, 0, 0, 0, 0])?;
            let mut push = Push::new();
            for i in 0..10u64 {
                push = push.addr(i * 256);
            }
            let kinds: [(&'static str, bool, bool, bool); 4] = [
                ("a dispatch", false, false, false),
                (
                    "a dispatch with 80 bytes of push constants",
                    true,
                    false,
                    false,
                ),
                (
                    "a barrier, push constants and a dispatch",
                    true,
                    true,
                    false,
                ),
                (
                    "a pipeline switch, a barrier, push constants and a dispatch",
                    true,
                    true,
                    true,
                ),
            ];
            let mut record_us = Vec::new();
            for (what, pushes, barriers, switches) in kinds {
                let host = std::cell::Cell::new(0.0f64);
                time(&|| {
                    let mut rec = self.rec();
                    let t = std::time::Instant::now();
                    for i in 0..rounds {
                        if barriers {
                            rec.barrier(compute, compute);
                        }
                        let pipe = if switches && i % 2 == 1 { other } else { nop };
                        rec.dispatch_raw(pipe, [1, 1, 1], pushes.then_some(&push));
                    }
                    host.set(t.elapsed().as_nanos() as f64);
                })?;
                record_us.push((what, host.get() / 1e3 / rounds as f64));
            }
            // Submits of one empty dispatch each, the host's clock around the submit and the
            // wait for its fence (each piece fenced, whatever `piece_fences` says).
            let (mut submit, mut fence) = (Vec::new(), Vec::new());
            let fences = std::mem::replace(&mut self.rec().piece_fences, true);
            for _ in 0..rounds {
                let mut rec = self.rec();
                rec.begin()?;
                rec.order(None, false, compute);
                rec.dispatch_raw(nop, [1, 1, 1], None);
                let t0 = std::time::Instant::now();
                rec.flush()?;
                let t1 = std::time::Instant::now();
                rec.land()?;
                let t2 = std::time::Instant::now();
                rec.submit(&self.stats)?;
                submit.push((t1 - t0).as_nanos() as f64 / 1e3);
                fence.push((t2 - t1).as_nanos() as f64 / 1e3);
            }
            self.rec().piece_fences = fences;
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            Ok(SyncCosts {
                barrier_us,
                grid_us,
                record_us,
                submit_us: median(&mut submit),
                fence_us: median(&mut fence),
            })
        })();
        timer.finish(self)?;
        result
    }

    /// Timing only (`zinc matvec-cost`): what a weight's decode mat-vec (one token, on the kernel
    /// and shape a decode step takes, its input quantized once) costs as a dependent stage by
    /// the device's clock, stage after stage on its `copies` in turn (enough of them that the
    /// device's last-level cache cannot serve one from its last run, as in a decode step), and what a dispatch of as many workgroups that only reads the same bytes
    /// costs (`stream_read.comp`, `loads` 16-byte loads an invocation in flight: the floor).
    /// Each figure is the difference between `rounds` such stages and one, per stage, each
    /// measurement one command buffer between two timestamps.
    pub fn matvec_costs(
        &self,
        copies: &[VkWeight],
        rounds: u32,
        loads: u32,
    ) -> Result<MatvecCost, VulkanError> {
        let rounds = rounds.max(2);
        let Some(w) = copies.first() else {
            return Err(VulkanError::BadOption(
                "matvec-cost: no weight to time".into(),
            ));
        };
        if copies
            .iter()
            .any(|c| c.ty != w.ty || c.dims != w.dims || c.row_bytes != w.row_bytes)
        {
            return Err(VulkanError::BadOption(
                "matvec-cost: copies of one weight, one format and shape".into(),
            ));
        }
        let (rows, cols) = (w.rows(), w.cols());
        if !self.dec_kernel_for(w, 1) {
            return Err(VulkanError::BadOption(format!(
                "matvec-cost times matvec_dec.comp's decode mat-vecs (Q4_K, Q6_K; rows a \
                 multiple of 256 values): not {} {rows} × {cols}",
                w.ty.name()
            )));
        }
        if ![1, 2, 4, 8].contains(&loads) {
            return Err(VulkanError::BadOption(format!(
                "stream-read loads in flight: 1, 2, 4 or 8, not {loads}"
            )));
        }
        let [lpr, nr, wg, _] = self.dec_shape(w);
        let wg = wg.max(lpr);
        let groups = rows.div_ceil((wg / lpr * nr) as usize);
        let bytes = rows as u64 * w.row_bytes;
        let xv: Vec<f32> = (0..cols)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
            .collect();
        let x = self.tensor_from(&xv, 1, cols);
        let y = self.new_tensor(1, rows);
        let sink = self.new_tensor(1, groups);
        let (x, y, sink) = (&x, &y, &sink);
        let timer = Timer::new(self)?;
        let result = (|| {
            let matvecs = |n: u32| {
                move || {
                    for i in 0..n as usize {
                        let w = &copies[i % copies.len()];
                        self.matvecq(w, x, y.addr(), false, None);
                    }
                }
            };
            let reads = |n: u32| {
                move || {
                    for i in 0..n as usize {
                        let w = &copies[i % copies.len()];
                        let mut push = Push::new();
                        push.a(w.buf.address)
                            .a(sink.addr())
                            .w((bytes / 16) as u32)
                            .w(groups as u32);
                        let spec = [wg, loads, 0, 0, 0, 0];
                        let g = fold(groups);
                        self.run_ordered("stream_read", spec, g, push, Some(sink.addr()), false);
                    }
                }
            };
            let per_stage = |many: f64, one: f64| (many - one) / 1e3 / (rounds - 1) as f64;
            let matvec_us = per_stage(
                timer.span_ns(self, &matvecs(rounds))?,
                timer.span_ns(self, &matvecs(1))?,
            );
            let read_us = per_stage(
                timer.span_ns(self, &reads(rounds))?,
                timer.span_ns(self, &reads(1))?,
            );
            Ok(MatvecCost {
                groups,
                bytes,
                matvec_us,
                read_us,
            })
        })();
        timer.finish(self)?;
        result
    }

    /// Pieces of recordings sent to the device before their end, in all (a recording's last
    /// submit not counted): see `VulkanOptions::submit_chunks`.
    pub fn pieces_sent(&self) -> u64 {
        self.rec().gaps.pieces
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// GPU time per shader since the backend started, most first: (shader, milliseconds,
    /// dispatches). Empty unless created with `profile`.
    pub fn profile(&self) -> Vec<(String, f64, u64)> {
        let r = self.rec();
        let mut v: Vec<(String, f64, u64)> = r
            .prof
            .as_ref()
            .map(|p| {
                p.totals
                    .iter()
                    .map(|(k, &(ns, n))| (k.to_string(), ns / 1e6, n))
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// argmax.comp over `x`'s rows: a tensor of one value a row, the index's bits.
    fn argmax_on_device(&self, x: &VkTensor) -> VkTensor {
        self.settle(x);
        let out = self.new_tensor(x.rows, 1);
        let mut push = Push::new();
        push.a(x.addr())
            .a(out.addr())
            .w(x.cols as u32)
            .w(x.rows as u32);
        self.run("argmax", 256, fold(x.rows), push);
        out
    }

    /// Copies `t` into the readback buffer (grown to fit), submits and waits: the recorder,
    /// locked, with `t`'s values at the start of its `readback`.
    fn read_back(&self, t: &VkTensor) -> std::sync::MutexGuard<'_, Recorder> {
        let (mut rec, bytes) = self.copy_for_host(t);
        rec.submit(&self.stats).unwrap_or_else(|e| fatal(e));
        self.stats.readback_bytes.fetch_add(bytes, Relaxed);
        rec
    }

    /// Records the copy of `t` into the readback buffer (grown to fit), unless it is the last
    /// such copy recorded (`Recorder::read_ready`): the recorder, locked, and the bytes.
    fn copy_for_host(&self, t: &VkTensor) -> (std::sync::MutexGuard<'_, Recorder>, u64) {
        self.settle(t);
        let bytes = (t.len() * 4) as u64;
        let mut rec = self.rec();
        let rb = rec.readback.as_ref().filter(|b| b.size >= bytes);
        let ready = rb.is_some_and(|b| rec.read_ready == Some((t.buffer().address, b.buffer)));
        if ready {
            return (rec, bytes);
        }
        if rb.is_none() {
            // A copy into the old buffer may be in flight (a step's, sent before its step ahead
            // was recorded) or still open (a demoted step ahead's): the old buffer lives until
            // the next wait, with what the open recording reads (and a recording ahead becomes
            // an ordinary one first, so that its buffers are those).
            rec.demote_ahead().unwrap_or_else(|e| fatal(e));
            let b = self
                .ctx
                .buffer(bytes.next_power_of_two(), Memory::Host)
                .unwrap_or_else(|e| fatal(e));
            if let Some(old) = rec.readback.replace(b) {
                rec.keep.push(old);
            }
        }
        let rb = rec
            .readback
            .as_ref()
            .map(|b| b.buffer)
            .expect("readback buffer");
        rec.copy(t.buffer().buffer, 0, rb, 0, bytes)
            .unwrap_or_else(|e| fatal(e));
        rec.before_host_read();
        if !rec.recording_ahead() {
            // (A step ahead's own copy is ready once it is launched.)
            rec.read_ready = Some((t.buffer().address, rb));
        }
        (rec, bytes)
    }

    /// Whether decode steps may be recorded ahead now: the option on, and nothing that reads
    /// the device between steps or times them kernel by kernel (profile, clock, ablation, dry).
    fn ahead_allowed(&self, rec: &Recorder) -> bool {
        self.tune.step_ahead
            && rec.prof.is_none()
            && !rec.dry
            && self.clock.is_none()
            && !self.ablating.load(Relaxed)
            && rec.loose == BarrierAblation::Full
    }

    fn rec(&self) -> std::sync::MutexGuard<'_, Recorder> {
        self.rec.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn new_tensor(&self, rows: usize, cols: usize) -> VkTensor {
        let buf = self
            .pool
            .take((rows * cols * 4) as u64)
            .unwrap_or_else(|e| fatal(e));
        VkTensor {
            buf: Some(buf),
            pool: self.pool.clone(),
            rows,
            cols,
            deferred: Mutex::new(None),
            is_deferred: AtomicBool::new(false),
        }
    }

    /// Records `shader` (workgroup size `wg`) over `groups`.
    #[inline(always)]
    fn run(&self, shader: &'static str, wg: u32, groups: [u32; 3], push: Push) {
        self.run_spec(shader, [wg, 0, 0], groups, push)
    }

    /// Records `shader` with both specialization constants over `groups`.
    #[inline(always)]
    fn run_spec(&self, shader: &'static str, spec: [u32; 3], groups: [u32; 3], push: Push) {
        let spec = [spec[0], spec[1], spec[2], 0, 0, 0];
        self.run_ordered(shader, spec, groups, push, None, false);
    }

    /// `run_spec` for a command that writes only `writes` (where given) and, if `concurrent`,
    /// reads only what the commands since the last barrier read (see `Recorder::order`).
    #[inline(always)]
    fn run_ordered(
        &self,
        shader: &'static str,
        spec: Spec,
        groups: [u32; 3],
        push: Push,
        writes: Option<u64>,
        concurrent: bool,
    ) {
        self.run_labeled(shader, shader, spec, groups, push, writes, concurrent);
    }

    /// `run_ordered` under another name in profiles (`label`).
    #[allow(clippy::too_many_arguments)]
    fn run_labeled(
        &self,
        shader: &'static str,
        label: &'static str,
        spec: Spec,
        groups: [u32; 3],
        push: Push,
        writes: Option<u64>,
        concurrent: bool,
    ) {
        if self.ablate(shader, label, spec, groups, &push) {
            return;
        }
        let pipe = self.ctx.pipeline(shader, spec).unwrap_or_else(|e| fatal(e));
        self.rec()
            .dispatch(label, pipe, &push, groups, writes, concurrent)
            .unwrap_or_else(|e| fatal(e));
    }

    /// `run_labeled` for a command recorded beside those since the last barrier, whatever they
    /// write (`Recorder::dispatch_beside`): early weights' consumers, which wait in the shader.
    fn run_beside(
        &self,
        shader: &'static str,
        label: &'static str,
        spec: Spec,
        groups: [u32; 3],
        push: Push,
    ) {
        let pipe = self.ctx.pipeline(shader, spec).unwrap_or_else(|e| fatal(e));
        self.rec()
            .dispatch_beside(label, pipe, &push, groups)
            .unwrap_or_else(|e| fatal(e));
    }

    /// Whether a timing ablation leaves `label` out or records it twice (`+label`).
    pub(super) fn ablation_touches(&self, label: &str) -> bool {
        if !self.ablating.load(Relaxed) {
            return false;
        }
        let a = self.ablation.lock().unwrap_or_else(|e| e.into_inner());
        a.skip
            .iter()
            .any(|s| names_kernel(s.strip_prefix('+').unwrap_or(s), label))
    }

    /// Timing ablations (`VulkanOptions::skip_kernels`): true where the kernel `label` is left
    /// out; one named `+label` is recorded an extra time first, after a barrier of its own.
    fn ablate(
        &self,
        shader: &'static str,
        label: &'static str,
        spec: Spec,
        groups: [u32; 3],
        push: &Push,
    ) -> bool {
        if !self.ablating.load(Relaxed) {
            return false;
        }
        let mut a = self.ablation.lock().unwrap_or_else(|e| e.into_inner());
        let named = |s: &str| names_kernel(s, label);
        if a.skip.iter().any(|s| named(s)) {
            return true;
        }
        if !NEVER_SKIPPED.contains(&label) {
            *a.counts.entry(label).or_default() += 1;
        }
        // `+NAME`: the kernel recorded twice, the second after a barrier of its own.
        if a.skip
            .iter()
            .any(|s| s.strip_prefix('+').is_some_and(named))
        {
            drop(a);
            let pipe = self.ctx.pipeline(shader, spec).unwrap_or_else(|e| fatal(e));
            self.rec()
                .dispatch(label, pipe, push, groups, None, false)
                .unwrap_or_else(|e| fatal(e));
        }
        false
    }

    /// A profile name for `shader` on a `rows × cols` weight when profiling (mat-vecs are
    /// timed per shape there), else `shader` itself.
    fn shape_label(&self, shader: &'static str, rows: usize, cols: usize) -> &'static str {
        if !self.profiling && !self.ablating.load(Relaxed) && self.clock.is_none() {
            return shader;
        }
        type Names = HashMap<(&'static str, usize, usize), &'static str>;
        static NAMES: Mutex<Option<Names>> = Mutex::new(None);
        let mut m = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        let map = m.get_or_insert_with(HashMap::new);
        map.entry((shader, rows, cols))
            .or_insert_with(|| Box::leak(format!("{shader} {rows}×{cols}").into_boxed_str()))
    }

    fn upload(&self, bytes: &[u8]) -> u64 {
        self.rec().upload(bytes).unwrap_or_else(|e| fatal(e))
    }

    /// One invocation per element of `n` (`shaders/elementwise.comp`: op codes and operands as
    /// its header lists them).
    #[allow(clippy::too_many_arguments)]
    fn elementwise(&self, x: u64, y: u64, o: u64, n: usize, ncols: usize, op: u32, s: f32) {
        const WG: u32 = 256;
        let mut push = Push::new();
        push.a(x)
            .a(y)
            .a(o)
            .a(self.gelu_table.address)
            .w(n as u32)
            .w(ncols as u32)
            .w(op)
            .f(s);
        self.run("elementwise", WG, fold(n.div_ceil(WG as usize)), push);
    }

    /// `y[i][c] = x[src(i)][col0 + c]`.
    fn gather(&self, x: &VkTensor, col0: usize, width: usize, rows: Option<&[usize]>) -> VkTensor {
        let nrows = rows.map_or(x.rows, <[usize]>::len);
        let out = self.new_tensor(nrows, width);
        let rows_addr = match rows {
            Some(r) => self.upload(&u32s(&r.iter().map(|&v| v as u32).collect::<Vec<_>>())),
            None => 0,
        };
        const WG: u32 = 256;
        let n = nrows * width;
        let mut push = Push::new();
        push.a(x.addr())
            .a(out.addr())
            .a(rows_addr)
            .w(x.cols as u32)
            .w(col0 as u32)
            .w(width as u32)
            .w(nrows as u32)
            .w(rows.is_some() as u32);
        self.run("gather", WG, fold(n.div_ceil(WG as usize)), push);
        out
    }

    /// RMSNorm of `x` by groups of `w`'s length, written to `out` (which may be `x`).
    fn norm_to(&self, x: &VkTensor, w: &VkWeight, eps: f32, out: u64) {
        let group = w.dims.iter().product::<u64>() as usize;
        let ngroups = x.len() / group.max(1);
        let mut push = Push::new();
        push.a(x.addr())
            .a(w.buf.address)
            .a(out)
            .w(x.cols as u32)
            .w(group as u32)
            .f(eps)
            .w(ngroups as u32);
        let wg = self.norm_wg(group, x.rows);
        self.run_spec(
            "rms_norm",
            [wg, self.tune.shuffle as u32, 0],
            fold(ngroups),
            push,
        );
    }

    /// RoPE on `x` and, in the same dispatch, on `y` (rows of the same positions).
    fn rope_pair(
        &self,
        x: &VkTensor,
        y: Option<&VkTensor>,
        head_dim: usize,
        positions: &[u32],
        p: &RopeParams,
    ) {
        let pos = self.upload(&u32s(positions));
        // One row: RoPE's cos and sin from the host, as the q/k preparation takes them.
        let table = self
            .rope_words(positions, p, head_dim)
            .map_or(0, |t| self.upload(&u32s(&t)));
        let half = p.n_rot.min(head_dim) / 2;
        let pairs = |t: &VkTensor| t.rows * (t.cols / head_dim) * half;
        let nx = pairs(x);
        let n = nx + y.map_or(0, pairs);
        let mut push = Push::new();
        push.a(x.addr())
            .a(y.map_or(0, |t| t.addr()))
            .a(pos)
            .a(table)
            .w(x.cols as u32)
            .w(y.map_or(0, |t| t.cols) as u32)
            .w(head_dim as u32)
            .w(p.n_rot.min(head_dim) as u32)
            .w((p.style == RopeStyle::Neox) as u32)
            .f(p.freq_base)
            .f(p.freq_scale)
            .w(x.rows as u32)
            .w(nx as u32);
        self.run("rope", 64, fold(n.div_ceil(64)), push);
    }

    fn scale_buffer(&self, s: Option<&[f32]>) -> Option<u64> {
        s.map(|v| self.upload(&f32s(v)))
    }
}

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        let mut r = self.rec();
        let _ = r.submit(&self.stats);
    }
}

/// The RoPE tables `rope_words` keeps: a step's rotations (Gemma 3 has two).
const ROPE_TABLES: usize = 2;

/// A table `rope_words` keeps: its position, rotated dimensions, frequency base and scale (bits).
struct RopeTable {
    key: (u32, usize, u32, u32),
    words: Arc<[u32]>,
}

/// RoPE's (cos, sin) of each pair at `pos` (`RopeParams::cos_sin`, what the CPU backend rotates
/// by) as f32 bits in pairs: the table the kernels that rotate one row take.
fn rope_table(pos: u32, p: &RopeParams, head_dim: usize) -> Vec<u32> {
    p.cos_sin(pos, head_dim)
        .into_iter()
        .flat_map(|(c, s)| [c.to_bits(), s.to_bits()])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `with_passes` sets matvec_dec.comp's passes (bits 4–7: passes less one) and keeps the
    /// pieces (bits 0–3) and PAIR (bit 8), as the kernel's header lays out constant 4.
    #[test]
    fn moe_passes_set_only_the_passes_bits() {
        assert_eq!(with_passes(2 | 1 << 8, 2), 2 | 1 << 4 | 1 << 8);
        assert_eq!(with_passes(1 | 3 << 4, 1), 1);
        assert_eq!(with_passes(4 | 1 << 4 | 1 << 8, 4), 4 | 3 << 4 | 1 << 8);
    }

    /// The host's RoPE table holds the cos and sin the CPU backend rotates by: its rope turns
    /// each pair (1, 0) into (cos, sin), at positions small and large, both pair layouts, a
    /// partial rotation (n_rot below the head) and a scaled frequency.
    #[test]
    fn the_rope_table_is_the_cpu_backends_angles() {
        let cpu = zinc_backend::cpu::CpuBackend::new();
        for (style, head_dim, n_rot, pos, freq_scale) in [
            (RopeStyle::Neox, 128usize, 128usize, 7u32, 1.0f32),
            (RopeStyle::Neox, 64, 64, 3000, 1.0),
            (RopeStyle::Norm, 64, 32, 41, 0.25),
            (RopeStyle::Neox, 256, 256, 123_456, 1.0),
        ] {
            let p = RopeParams {
                style,
                n_rot,
                freq_base: 1_000_000.0,
                freq_scale,
            };
            let half = n_rot / 2;
            let pair = |i: usize| match style {
                RopeStyle::Norm => (2 * i, 2 * i + 1),
                RopeStyle::Neox => (i, i + half),
            };
            let mut x = vec![0.0f32; head_dim];
            for i in 0..half {
                x[pair(i).0] = 1.0;
            }
            let mut t = cpu.tensor_from(&x, 1, head_dim);
            cpu.rope(&mut t, head_dim, &[pos], &p);
            let got = cpu.read(&t);
            let table = rope_table(pos, &p, head_dim);
            assert_eq!(table.len(), n_rot);
            for i in 0..half {
                let (a, b) = pair(i);
                let want = [got[a].to_bits(), got[b].to_bits()];
                assert_eq!(
                    table[2 * i..2 * i + 2],
                    want,
                    "{style:?} pos {pos} pair {i}"
                );
            }
        }
    }

    /// Q6_K's device layout (rows across threads): each row's blocks in groups of eight, the
    /// group's eight `d` first in one 16-byte vector, then each block's 208 other bytes in
    /// order; a short last group as long as it needs (its unused `d` slots zero); rows of whole
    /// groups exactly 210 bytes a block. Other formats as they are.
    #[test]
    fn q6k_rows_are_grouped_by_eight_blocks() {
        let block = GgmlType::Q6_K.type_size();
        assert_eq!((block, Q6_K_BODY + 2), (210, 210));
        for (nb, rows) in [(16usize, 3usize), (3, 5), (11, 2), (8, 1), (1, 2)] {
            let cols = 256 * nb as u64;
            let bytes: Vec<u8> = (0..rows * nb * block)
                .map(|i| (i % 251) as u8 + 1)
                .collect();
            let (row, out) = device_layout(GgmlType::Q6_K, cols, bytes.as_slice().into());
            let expect = (nb / 8) * 1680 + if nb % 8 > 0 { 16 + 208 * (nb % 8) } else { 0 };
            assert_eq!(row as usize, expect, "{nb} blocks");
            assert_eq!(row % 16, 0);
            assert_eq!(out.len(), rows * expect);
            for r in 0..rows {
                for b in 0..nb {
                    let src = &bytes[(r * nb + b) * block..(r * nb + b + 1) * block];
                    let g = r * expect + 1680 * (b / 8);
                    let d = g + 2 * (b % 8);
                    assert_eq!(&out[d..d + 2], &src[208..], "row {r} block {b}'s d");
                    let body = g + 16 + 208 * (b % 8);
                    assert_eq!(&out[body..body + 208], &src[..208], "row {r} block {b}");
                }
                // A short group's unused d slots are zero.
                let last = nb % 8;
                if last > 0 {
                    let g = r * expect + 1680 * (nb / 8);
                    assert!(out[g + 2 * last..g + 16].iter().all(|&b| b == 0));
                }
            }
        }
        let q4 = vec![7u8; 144 * 3];
        let (row, same) = device_layout(GgmlType::Q4_K, 256, q4.as_slice().into());
        assert_eq!((row, &*same), (144, q4.as_slice()));
    }

    /// A session's cache is filled and waited for when it is made: none of its setup rides in
    /// the first step's recording (whose device span `zinc bench` times), even with more fills
    /// than a recording's first piece holds.
    #[test]
    fn a_kv_cache_is_ready_before_the_first_step() {
        let b = VulkanBackend::new(&VulkanOptions::default()).expect("a Vulkan device");
        let dims = [64; 12]; // 24 fills, more than FIRST_CHUNK
        assert!(2 * dims.len() > recorder::FIRST_CHUNK as usize);
        let cache = b.kv_cache(32, &dims);
        assert!(b.rec().settled());
        assert_eq!((cache.k.len(), cache.v.len()), (12, 12));
    }

    /// `read_with` lends what `read` returns, even to a reader that reads again meanwhile (the
    /// readback buffer is its own while it reads); the host's gaps add up (their parts within
    /// their whole), and a gap open when asked counts from then on.
    #[test]
    fn values_lent_in_place_are_those_read() {
        let b = VulkanBackend::new(&VulkanOptions::default()).expect("a Vulkan device");
        let v: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 7.0).collect();
        let x = b.tensor_from(&v, 2, 500);
        let mut y = b.copy(&x);
        b.scale(&mut y, -2.0);
        let want_x = b.read(&x);
        let want_y = b.read(&y);
        assert_eq!(want_x, v);
        let mut seen = Vec::new();
        b.read_with(&x, &mut |lent| {
            // A read of another tensor while this one is lent: a buffer of its own.
            assert_eq!(b.read(&y), want_y);
            seen = lent.to_vec();
        });
        assert_eq!(seen, want_x);
        b.read_with(&y, &mut |lent| seen = lent.to_vec());
        assert_eq!(seen, want_y);
        let g = b.host_gaps().unwrap();
        assert!(g.reading + g.before_recording <= g.between, "{g:?}");
        assert!(g.reading > std::time::Duration::ZERO, "{g:?}");
        assert!(g.recording > std::time::Duration::ZERO, "{g:?}");
        // After a wait the gap is open; asking restarts it, so a pause before the next submit's
        // recording is the gap, not the time before asking.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let open = b.host_gaps().unwrap();
        b.scale(&mut y, 1.0);
        let _ = b.read(&y);
        let after = b.host_gaps().unwrap();
        assert!(
            after.between - open.between < std::time::Duration::from_millis(25),
            "{open:?} {after:?}"
        );
    }

    /// Pipeline statistics where the device reports them (a line naming each kernel made so
    /// far, with the driver's figures); else the backend refuses, naming the extension.
    #[test]
    fn pipeline_stats_are_reported_or_refused_by_name() {
        let opts = VulkanOptions {
            pipeline_stats: true,
            ..Default::default()
        };
        match VulkanBackend::new(&opts) {
            Ok(b) => {
                let x = b.tensor_from(&[1.0, -2.0, 3.0, 4.0], 1, 4);
                let mut y = b.copy(&x);
                b.scale(&mut y, 2.0);
                assert_eq!(b.read(&y), [2.0, -4.0, 6.0, 8.0]);
                let lines = b
                    .pipeline_stats()
                    .unwrap()
                    .expect("statistics were asked for");
                assert!(
                    lines.iter().any(|l| l.starts_with("elementwise ")),
                    "{lines:?}"
                );
            }
            Err(e) => {
                let m = e.to_string();
                assert!(m.contains("VK_KHR_pipeline_executable_properties"), "{m}");
            }
        }
        // Not asked for: none.
        let b = VulkanBackend::new(&VulkanOptions::default()).expect("a Vulkan device");
        assert!(b.pipeline_stats().unwrap().is_none());
    }

    /// `sync_costs`: one workgroup meeting itself always completes every round (the counters
    /// say so), and the figures are finite; workgroups that cannot all be resident are
    /// reported, not waited for.
    #[test]
    fn a_lone_workgroup_meets_itself_every_round() {
        let b = VulkanBackend::new(&VulkanOptions::default()).expect("a Vulkan device");
        let c = b.sync_costs(16, &[1], 1 << 20).unwrap();
        assert!(c.barrier_us.is_finite());
        assert_eq!(c.grid_us.len(), 1);
        assert!(c.grid_us[0].1.is_some_and(f64::is_finite), "{c:?}");
        assert!(b.rec().settled());
        // More workgroups than a CPU device runs at once: the waits give up and say so.
        if b.device().kind == crate::DeviceKind::Cpu {
            let c = b.sync_costs(4, &[256], 1 << 12).unwrap();
            assert_eq!(c.grid_us, [(256, None)], "{c:?}");
        }
    }

    /// Pipelines are found by where the shader's name lies (`Context::pipeline`): the same
    /// text at another address finds the same pipeline (none made twice), another text or
    /// other constants another one.
    #[test]
    fn a_shader_name_anywhere_finds_one_pipeline() {
        let b = VulkanBackend::new(&VulkanOptions::default()).expect("a Vulkan device");
        let spec = [64, 0, 0, 0, 0, 0];
        let here = b.ctx.pipeline("elementwise", spec).unwrap();
        let elsewhere: &'static str = Box::leak(String::from("elementwise").into_boxed_str());
        assert_ne!(elsewhere.as_ptr(), "elementwise".as_ptr());
        assert_eq!(b.ctx.pipeline(elsewhere, spec).unwrap(), here);
        assert_eq!(b.ctx.pipeline("elementwise", spec).unwrap(), here);
        assert_ne!(
            b.ctx.pipeline("elementwise", [128, 0, 0, 0, 0, 0]).unwrap(),
            here
        );
        assert_ne!(b.ctx.pipeline("gather", spec).unwrap(), here);
    }

    /// Push constants are the words written, in order, as bytes (the in-place and the by-value
    /// forms alike): an address as its low word then its high one.
    #[test]
    fn push_constants_are_the_words_in_order() {
        let a = 0x1122_3344_5566_7788u64;
        let by_value = Push::new().addr(a).u32(7).f32(1.5);
        let mut in_place = Push::new();
        in_place.a(a).w(7).f(1.5);
        let mut want = a.to_le_bytes().to_vec();
        want.extend(7u32.to_le_bytes());
        want.extend(1.5f32.to_bits().to_le_bytes());
        assert_eq!(by_value.as_bytes(), want);
        assert_eq!(in_place.as_bytes(), want);
        // Up to the layout's 128 bytes.
        let mut full = Push::new();
        for i in 0..crate::context::PUSH_BYTES / 4 {
            full.w(i);
        }
        assert_eq!(full.as_bytes().len(), crate::context::PUSH_BYTES as usize);
    }

    /// A dry recording (`--vk-skip record`) counts, orders and uploads what a real one does but
    /// hands the driver no command: the same commands and dependent stages, and a buffer the
    /// real recording fills keeps its old contents.
    #[test]
    fn a_dry_recording_counts_the_same_and_writes_nothing() {
        let run = |dry: bool| {
            let opts = VulkanOptions {
                skip_kernels: if dry { vec![DRY.into()] } else { vec![] },
                ..VulkanOptions::default()
            };
            let b = VulkanBackend::new(&opts).expect("a Vulkan device");
            assert!(!b.ablating.load(Relaxed), "`record` is no kernel ablation");
            let v: Vec<f32> = (0..512).map(|i| i as f32).collect();
            let x = b.tensor_from(&v, 1, 512);
            let ops0 = b.rec().ops;
            let stages0 = b.dependent_stages().unwrap();
            let mut y = b.copy(&x);
            b.scale(&mut y, 2.0);
            b.scale(&mut y, 3.0);
            let ops = b.rec().ops - ops0;
            let counts = (ops, b.dependent_stages().unwrap() - stages0);
            (counts, b.read(&y), b.read(&x))
        };
        let (real, y_real, x_real) = run(false);
        let (dry, y_dry, _) = run(true);
        assert_eq!(real, dry);
        assert!(real.0 >= 3 && real.1 >= 2, "{real:?}");
        let want: Vec<f32> = x_real.iter().map(|v| v * 6.0).collect();
        assert_eq!(y_real, want);
        assert_ne!(y_dry, want, "a dry recording ran its commands");
    }
}
