//! The backend trait: device buffers and the op set at the granularity an LLM needs, written once
//! and implemented per device (`cpu` here; Vulkan and CUDA implement the same trait).
//!
//! Activations are `Tensor`s of `rows × cols` f32 values, one row per token. Weights stay in their
//! GGUF block layout on every backend (no dequantized copy). A model's forward pass is written
//! against this trait only (`zinc-models`), so every backend runs the same model code.
//!
//! The CPU backend is also the oracle: its kernels follow llama.cpp's numerics where that is
//! cheap (activations quantized to Q8_0/Q8_1/Q8_K before integer dot products, RMSNorm summed in
//! f64, RoPE angles stepped in f32, the f16 GELU table, Q rounded to f16 against the f16 KV
//! cache), so greedy outputs can be compared token for token.

pub mod conformance;
pub mod cpu;

use zinc_gguf::{GgmlType, GgufModel};

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("tensor {name:?} has type {ty}, which the {backend} backend does not support")]
    UnsupportedType {
        name: String,
        ty: GgmlType,
        backend: String,
    },
    #[error("tensor {0:?} is missing")]
    MissingTensor(String),
    #[error("tensor {name:?} has shape {dims:?}, expected {expected}")]
    BadShape {
        name: String,
        dims: Vec<u64>,
        expected: String,
    },
    #[error("KV cache: position {pos} is outside the context of {n_ctx}")]
    ContextOverflow { pos: usize, n_ctx: usize },
}

/// The formats a weight may have on any backend: every block format with a dot-product partner
/// (Q8_K is an activation format only).
pub const WEIGHT_FORMATS: &[GgmlType] = &[
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::IQ4_NL,
    GgmlType::IQ4_XS,
    GgmlType::MXFP4,
];

/// The host's time between a wait for everything sent to the device and the next work it
/// sends (`Backend::host_gaps`): the host's part of the device's idle time between decode
/// steps, in three parts that add up to it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostGaps {
    /// From each such wait's end to the next submit, in all.
    pub between: std::time::Duration,
    /// Of that, copying results out of mapped memory (`Backend::read`).
    pub reading: std::time::Duration,
    /// Of that, the rest of the time before the next work's first command was recorded (the
    /// remainder of `between` is recording the commands of its first piece).
    pub before_recording: std::time::Duration,
    /// Apart from the gaps: the host's time recording its waited-for work, from each one's
    /// first command to its last submit (the device's waits inside left out), and the pieces
    /// of it sent before that submit, in all. How far ahead of the device the host records
    /// decides how large pieces can be without the device waiting for one.
    pub recording: std::time::Duration,
    pub pieces: u64,
    /// Steps recorded ahead, while the device ran the one before, and sent whole
    /// (`Backend::ahead_launch`): their recording is not in the gaps.
    pub ahead: u64,
}

/// One dependent stage of a step as the device's clock saw it (`Backend::clock_step`): the
/// commands between two barriers, their workgroups' starts and ends. Times are nanoseconds
/// from the step's first workgroup's start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockStage {
    /// The labels of the stage's commands (as profiles name them), in order, joined by " + ".
    pub label: String,
    /// Workgroups that wrote a record, and those the stage's clocked commands dispatched (0:
    /// none of its commands has a clocked form; its time shows in the gap before the next
    /// stage). Fewer records than that: the buffer was full.
    pub groups: u64,
    pub expected: u64,
    /// The first workgroup's start, the last workgroup's start, the last one's end.
    pub first_start: f64,
    pub last_start: f64,
    pub last_end: f64,
    /// Workgroups' durations (start to end, ns): the median and the largest; and the median
    /// in the SM's cycles.
    pub wg_median: f64,
    pub wg_max: f64,
    pub cycles_median: f64,
    /// When nine in ten of the workgroups had ended, ns from the first one's start: against
    /// the span (`last_end − first_start`), how long the stage's last tenth straggles.
    pub end90: f64,
    /// Where the kernel marks its progress (the Vulkan shaders' CLK_MARK), the median ns from
    /// a workgroup's start to each mark; 0 for a mark none reached.
    pub marks: [f64; CLOCK_MARKS],
}

/// Marks a clocked workgroup notes (`ClockStage::marks`).
pub const CLOCK_MARKS: usize = 8;

/// A step's stages as the device's clock saw them (`Backend::clock_step`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockStep {
    pub stages: Vec<ClockStage>,
    /// Workgroups that counted themselves, and those the commands dispatched of clocked
    /// kernels: equal unless records were lost (the buffer full).
    pub counted: u64,
    pub expected: u64,
    /// Records whose kernel is not one of the stage's they were placed in by time (two
    /// stages' workgroups within one tick of the clock): 0 where the placement is sure.
    pub misplaced: u64,
}

/// Finds tensor `name` for `Backend::weight`: its index and view, or the error naming it (missing,
/// or of a type `backend` cannot use).
pub fn find_weight<'m, B: Backend + ?Sized>(
    b: &B,
    backend: &str,
    model: &'m GgufModel,
    name: &str,
) -> Result<(usize, zinc_gguf::Tensor<'m>), BackendError> {
    let index = model
        .tensor_index(name)
        .ok_or_else(|| BackendError::MissingTensor(name.to_string()))?;
    let t = model
        .tensor_by_index(index)
        .ok_or_else(|| BackendError::MissingTensor(name.to_string()))?;
    if !b.supports(t.info.ty) {
        return Err(BackendError::UnsupportedType {
            name: name.to_string(),
            ty: t.info.ty,
            backend: backend.into(),
        });
    }
    Ok((index, t))
}

/// How RoPE pairs dimensions (`ARCHITECTURES.md §2.2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeStyle {
    /// Adjacent pairs `(x[2i], x[2i+1])` (llama).
    Norm,
    /// Rotate-half pairs `(x[i], x[i + n_rot/2])` (Qwen, Gemma).
    Neox,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeParams {
    pub style: RopeStyle,
    /// Rotated dimensions per head (≤ head_dim; the rest pass through).
    pub n_rot: usize,
    pub freq_base: f32,
    /// `1 / rope.scaling.factor` for linear scaling, else 1.
    pub freq_scale: f32,
}

impl RopeParams {
    /// (cos, sin) of each pair i < min(n_rot, head_dim) / 2 at `pos`: the angle stepped in f32
    /// as ggml does (freq_base^(−2/n_rot) multiplied i times), scaled, then `cos` and `sin`.
    /// The CPU backend rotates by these, and GPU backends may take them as a table.
    pub fn cos_sin(&self, pos: u32, head_dim: usize) -> Vec<(f32, f32)> {
        let n_rot = self.n_rot.min(head_dim);
        let theta_scale = self.freq_base.powf(-2.0 / n_rot as f32);
        let mut theta = pos as f32;
        let mut out = Vec::with_capacity(n_rot / 2);
        for _ in 0..n_rot / 2 {
            let t = self.freq_scale * theta;
            out.push((t.cos(), t.sin()));
            theta *= theta_scale;
        }
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttnParams {
    pub n_head: usize,
    pub n_head_kv: usize,
    pub head_dim: usize,
    /// Multiplies `q·k` before the softmax.
    pub scale: f32,
    /// Sliding window in tokens, the current one included (`None`: full causal attention).
    pub window: Option<usize>,
}

/// The activation of a gated FFN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatedAct {
    /// `silu(gate) · up`
    SwiGlu,
    /// `gelu_tanh(gate) · up`
    GeGlu,
}

/// The weights of one mixture-of-experts block.
pub struct MoeWeights<'a, W> {
    pub router: &'a W,
    /// Gate and up projections: separate, or one fused tensor whose first `n_ff` rows per expert
    /// are the gate.
    pub gate_up: GateUp<'a, W>,
    pub down: &'a W,
    /// Per-expert output scales of the gate, up and down projections (`*_exps.scale`).
    pub scales: [Option<&'a [f32]>; 3],
    pub k: usize,
    pub renorm: bool,
    pub act: GatedAct,
}

pub enum GateUp<'a, W> {
    Separate { gate: &'a W, up: &'a W },
    Fused(&'a W),
}

/// A backend: where weights live and ops run.
///
/// Ops take and produce `Tensor`s of `rows` tokens. Implementations may queue work and run it
/// later; `read` returns the values once everything queued before it has run.
pub trait Backend: Send + Sync {
    type Weight: Send + Sync;
    type Tensor: Send;
    type KvCache: Send;

    fn name(&self) -> String;

    /// Whether quantized matmuls (and row lookups) over `ty` weights run here.
    fn supports(&self, ty: GgmlType) -> bool;

    /// Makes tensor `name` of `model` usable as a weight.
    fn weight(
        &self,
        model: &std::sync::Arc<GgufModel>,
        name: &str,
    ) -> Result<Self::Weight, BackendError>;

    /// The shape of a weight in ggml order (`dims[0]` contiguous).
    fn weight_dims<'w>(&self, w: &'w Self::Weight) -> &'w [u64];

    /// A small weight's values as f32 on the host (norm weights, `.scale` scalars).
    fn weight_values(&self, w: &Self::Weight) -> Vec<f32>;

    fn tensor(&self, rows: usize, cols: usize) -> Self::Tensor;
    fn copy(&self, t: &Self::Tensor) -> Self::Tensor;
    /// Splits the columns of every row into consecutive tensors of the given widths (the output of
    /// a fused QKV projection).
    fn split_cols(&self, t: &Self::Tensor, widths: &[usize]) -> Vec<Self::Tensor>;
    fn tensor_from(&self, data: &[f32], rows: usize, cols: usize) -> Self::Tensor;
    fn read(&self, t: &Self::Tensor) -> Vec<f32>;
    /// `t`'s values (as `read` returns them) lent to `f`, without the copy into a new vector
    /// where the backend can: a decode step's logits read where the device left them. `f` may
    /// use the backend; the values it sees stay as they are until it returns.
    fn read_with(&self, t: &Self::Tensor, f: &mut dyn FnMut(&[f32])) {
        f(&self.read(t))
    }
    fn shape(&self, t: &Self::Tensor) -> (usize, usize);

    /// `out[t] = table[ids[t]] · scale` (rows of an embedding table, dequantized).
    fn embed(&self, table: &Self::Weight, ids: &[u32], scale: f32) -> Self::Tensor;

    /// `out[t][r] = Σ_c w[r][c] · x[t][c]`: a weight `{cols, rows}` times each token row.
    fn matmul(&self, w: &Self::Weight, x: &Self::Tensor) -> Self::Tensor;

    /// Adds a 1-D weight (a bias) to every row.
    fn add_bias(&self, x: &mut Self::Tensor, b: &Self::Weight);

    /// RMS-normalizes each group of `w.len()` columns of every row and multiplies by `w`
    /// (groups = heads for Q/K norms, the whole row otherwise).
    fn rms_norm(&self, x: &mut Self::Tensor, w: &Self::Weight, eps: f32);

    /// `rms_norm` into a new tensor, leaving `x` as it is (the pre-norm of a residual block).
    fn rms_norm_into(&self, x: &Self::Tensor, w: &Self::Weight, eps: f32) -> Self::Tensor {
        let mut h = self.copy(x);
        self.rms_norm(&mut h, w, eps);
        h
    }

    /// Rotates each head of each row by its token's position.
    fn rope(&self, x: &mut Self::Tensor, head_dim: usize, positions: &[u32], p: &RopeParams);

    /// `rope` on queries and keys together (one step where the backend can).
    fn rope_qk(
        &self,
        q: &mut Self::Tensor,
        k: &mut Self::Tensor,
        head_dim: usize,
        positions: &[u32],
        p: &RopeParams,
    ) {
        self.rope(q, head_dim, positions, p);
        self.rope(k, head_dim, positions, p);
    }

    fn scale(&self, x: &mut Self::Tensor, s: f32);

    /// `x += y`
    fn add(&self, x: &mut Self::Tensor, y: &Self::Tensor);

    /// `acc += W·x` (a residual connection): the same numbers as `matmul` then `add`, which
    /// a backend may do in one step.
    fn matmul_add(&self, w: &Self::Weight, x: &Self::Tensor, acc: &mut Self::Tensor) {
        let y = self.matmul(w, x);
        self.add(acc, &y);
    }

    /// `acc += W·x`, then `rms_norm_into(acc, norm, eps)`: a residual connection and the next
    /// block's pre-norm, which a backend may fuse (the norm computed as the sums arrive).
    fn matmul_add_norm(
        &self,
        w: &Self::Weight,
        x: &Self::Tensor,
        acc: &mut Self::Tensor,
        norm: &Self::Weight,
        eps: f32,
    ) -> Self::Tensor {
        self.matmul_add(w, x, acc);
        self.rms_norm_into(acc, norm, eps)
    }

    /// `act(gate) ⊙ up`
    fn gated(&self, gate: &Self::Tensor, up: &Self::Tensor, act: GatedAct) -> Self::Tensor;

    /// `act(gate·x) ⊙ (up·x)`, a gated FFN's input to its down-projection: the same numbers as
    /// `matmul`, `matmul` and `gated`, which a backend may do in fewer steps.
    fn gate_up_act(
        &self,
        gate: &Self::Weight,
        up: &Self::Weight,
        x: &Self::Tensor,
        act: GatedAct,
    ) -> Self::Tensor {
        let g = self.matmul(gate, x);
        let u = self.matmul(up, x);
        self.gated(&g, &u, act)
    }

    /// A KV cache of `n_ctx` positions for layers with the given K/V widths.
    fn kv_cache(&self, n_ctx: usize, kv_dims: &[usize]) -> Self::KvCache;

    /// Stores K and V rows of `layer` at `positions`.
    fn kv_store(
        &self,
        cache: &mut Self::KvCache,
        layer: usize,
        k: &Self::Tensor,
        v: &Self::Tensor,
        positions: &[u32],
    ) -> Result<(), BackendError>;

    /// Attention's inputs for `layer`: each query and key head RMS-normalized by `q_norm` /
    /// `k_norm` where given, RoPE on both, then K and V stored at `positions` — the same
    /// numbers as those ops one after another, which a backend may do in one step. `q` and `k`
    /// end normalized and rotated.
    #[allow(clippy::too_many_arguments)]
    fn qk_norm_rope_store(
        &self,
        q: &mut Self::Tensor,
        k: &mut Self::Tensor,
        v: &Self::Tensor,
        norms: (Option<&Self::Weight>, Option<&Self::Weight>),
        eps: f32,
        head_dim: usize,
        positions: &[u32],
        rope: &RopeParams,
        cache: &mut Self::KvCache,
        layer: usize,
    ) -> Result<(), BackendError> {
        if let Some(n) = norms.0 {
            self.rms_norm(q, n, eps);
        }
        if let Some(n) = norms.1 {
            self.rms_norm(k, n, eps);
        }
        self.rope_qk(q, k, head_dim, positions, rope);
        self.kv_store(cache, layer, k, v, positions)
    }

    /// `qk_norm_rope_store`, then `q` scaled by `q_scale` where given (Gemma 3's pre-scale), then
    /// `attention` of its rows: the same arithmetic, which a backend may do in one step (the
    /// Vulkan backend's decode attention does the first two itself, to within rounding: its
    /// kernel may contract and sum in another order). `q` and `k` are taken:
    /// what they hold after is the backend's.
    #[allow(clippy::too_many_arguments)]
    fn prep_attention(
        &self,
        mut q: Self::Tensor,
        mut k: Self::Tensor,
        v: &Self::Tensor,
        norms: (Option<&Self::Weight>, Option<&Self::Weight>),
        eps: f32,
        positions: &[u32],
        rope: &RopeParams,
        cache: &mut Self::KvCache,
        layer: usize,
        attn: &AttnParams,
        q_scale: Option<f32>,
    ) -> Result<Self::Tensor, BackendError> {
        self.qk_norm_rope_store(
            &mut q,
            &mut k,
            v,
            norms,
            eps,
            attn.head_dim,
            positions,
            rope,
            cache,
            layer,
        )?;
        if let Some(s) = q_scale {
            self.scale(&mut q, s);
        }
        Ok(self.attention(&q, cache, layer, positions, attn))
    }

    /// Causal attention of each query row (at `positions`) over the cache of `layer`.
    fn attention(
        &self,
        q: &Self::Tensor,
        cache: &Self::KvCache,
        layer: usize,
        positions: &[u32],
        p: &AttnParams,
    ) -> Self::Tensor;

    /// A mixture-of-experts FFN: softmax router over `router · x`, top `k` experts, weights
    /// renormalised when `renorm`, each expert a gated FFN of 3-D `{n_embd, n_ff, n_expert}`
    /// weights (gate and up separate, or fused with gate rows first), each optionally scaled per
    /// expert.
    fn moe_ffn(&self, x: &Self::Tensor, w: &MoeWeights<'_, Self::Weight>) -> Self::Tensor;

    /// `acc += moe_ffn(x, w)` (a residual connection): the same numbers, which a backend may
    /// produce in one step.
    fn moe_ffn_add(
        &self,
        x: &Self::Tensor,
        w: &MoeWeights<'_, Self::Weight>,
        acc: &mut Self::Tensor,
    ) {
        let y = self.moe_ffn(x, w);
        self.add(acc, &y);
    }

    /// `moe_ffn_add`, then `rms_norm_into(acc, norm, eps)` (see `matmul_add_norm`).
    fn moe_ffn_add_norm(
        &self,
        x: &Self::Tensor,
        w: &MoeWeights<'_, Self::Weight>,
        acc: &mut Self::Tensor,
        norm: &Self::Weight,
        eps: f32,
    ) -> Self::Tensor {
        self.moe_ffn_add(x, w, acc);
        self.rms_norm_into(acc, norm, eps)
    }

    /// Keeps only the listed rows (e.g. the last token before the output head).
    fn select_rows(&self, x: &Self::Tensor, rows: &[usize]) -> Self::Tensor;

    /// `cap · tanh(x / cap)`
    fn softcap(&self, x: &mut Self::Tensor, cap: f32);

    /// Index of the largest value of each row.
    fn argmax(&self, x: &Self::Tensor) -> Vec<u32>;

    /// `argmax`, left on the device: a tensor of one value a row, each the index's bits (read
    /// with `read` and `f32::to_bits`). `None` where the backend keeps no such tensor.
    fn argmax_tensor(&self, _x: &Self::Tensor) -> Option<Self::Tensor> {
        None
    }

    /// Decode steps recorded ahead, where a backend records commands for a device that runs
    /// them later: while the device runs one step, the next is recorded (its token not yet
    /// known) and later submitted whole. `ahead_begin`: `prev`, this step's result, is what the
    /// host reads next (its copy is recorded now); what is recorded from here to `ahead_end`
    /// is the next step, which must take one token through `embed`. False: no step ahead here
    /// (the caller records nothing ahead).
    fn ahead_begin(&self, _prev: &Self::Tensor) -> bool {
        false
    }

    /// Ends the step begun by `ahead_begin`; `out`: the tensor its caller will read (`None`:
    /// its forward failed; nothing of it runs). Its ticket, or `None` where it cannot be
    /// launched (the caller runs that step in the ordinary way when it comes).
    fn ahead_end(&self, _out: Option<&Self::Tensor>) -> Option<u64> {
        None
    }

    /// Submits the step ahead `ticket` with its token `id`; false where it is gone (anything
    /// else recorded since drops it): the caller runs the step in the ordinary way.
    fn ahead_launch(&self, _ticket: u64, _id: u32) -> bool {
        false
    }

    /// Drops the step ahead `ticket`, if it is still kept.
    fn ahead_cancel(&self, _ticket: u64) {}

    /// Device time per kernel (name, milliseconds, calls), most first, when the backend was
    /// created with profiling on; `None` when it times nothing.
    fn profile_report(&self) -> Option<Vec<(String, f64, u64)>> {
        None
    }

    /// What the device's compiler made of each kernel used so far (a line per kernel and
    /// shape: registers, shared memory, … as the driver reports them), when the backend was
    /// created asking for it; `None` otherwise.
    fn kernel_stats(&self) -> Option<Vec<String>> {
        None
    }

    /// How long the host has been blocked waiting for the device, in all, since the backend
    /// was created; `None` where the host does the work itself. A run in which the host
    /// hardly waited was bound by the host's recording, not by the device.
    fn host_waited(&self) -> Option<std::time::Duration> {
        None
    }

    /// How long the device has spent on the backend's steps, in all, since it was created: for
    /// each recording the host waited for, from its first command to the end of its last, by
    /// the device's clock; `None` where the backend cannot tell. Against the wall time it shows
    /// how long the device sat idle between steps, waiting for the host.
    fn device_busy(&self) -> Option<std::time::Duration> {
        None
    }

    /// The host's side of the round trips between steps, in all, since the backend was
    /// created (`HostGaps`); `None` where the backend does not tell. A gap open at the call
    /// counts from the call on, so that a caller timing from there does not count its own
    /// work before it.
    fn host_gaps(&self) -> Option<HostGaps> {
        None
    }

    /// The barriers the backend has recorded, in all, since it was created: each makes the
    /// device finish everything before it first. A step's first command takes one too (after
    /// the step before), so per token the count is the step's dependent stages — commands
    /// that wait for all before them, each a drain and a ramp-up where the device was busy.
    /// `None` where the backend does not tell.
    fn dependent_stages(&self) -> Option<u64> {
        None
    }

    /// The work since the last call as the device's clock saw it, stage by stage, where the
    /// backend was created to clock its kernels (`ClockStep`; the Vulkan backend's
    /// `VulkanOptions::clock`); `None` otherwise. Waits for the device first.
    fn clock_step(&self) -> Option<ClockStep> {
        None
    }

    /// Lets go of the clock's records of the work so far (waiting for the device) without
    /// reading them; false where the backend does not clock its kernels.
    fn clock_reset(&self) -> bool {
        false
    }

    /// Ablation, for measuring what each kernel costs (`zinc bench --ablate`): the kernels
    /// dispatched since the last call with `Some`, by name, with their counts; and with
    /// `Some(names)`, from now on those kernels are left out of every recording (the results
    /// are wrong; the timing is real) and the counts start afresh. `None` where the backend
    /// cannot (the default).
    fn ablation(&self, _skip: Option<&[String]>) -> Option<Vec<(String, u64)>> {
        None
    }
}
