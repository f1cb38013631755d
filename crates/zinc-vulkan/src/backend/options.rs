//! The Vulkan backend's options (chosen at the edge: the CLI, tests) and their resolution
//! against the device into the kernel shapes the backend records with: defaults per device
//! kind, and an error naming any tuning value out of range.

use super::recorder::{ADAPTIVE_POLL_US, CHUNK, FIRST_CHUNK, GROWTH};
use super::*;
use crate::DeviceInfo;

/// Options chosen at the edge (CLI): which device, and whether to validate.
#[derive(Clone, Debug, Default)]
pub struct VulkanOptions {
    /// `--device N`; `None` picks the best device.
    pub device: Option<usize>,
    /// Turn on VK_LAYER_KHRONOS_validation.
    pub validation: bool,
    /// Mat-vec threads per weight row on decode steps (a power of two ≤ 64). `None`: 1 on CPU
    /// devices (a row per SIMD lane, no barriers); on GPUs 16 for the integer-dot kernel, 64 for
    /// the float one. Tests set it to run the GPU kernels on lavapipe.
    pub threads_per_row: Option<u32>,
    /// The integer-dot mat-vec on decode steps as (threads per row, rows per group of them,
    /// workgroup size), kernel tuning, for every matrix as given. `None`: (`threads_per_row`
    /// or 16, 1, 128) on GPUs.
    pub decode_matvec: Option<(u32, u32, u32)>,
    /// Decode steps of Q4_K/Q6_K weights on `matvec_dec.comp` as (lanes per group of rows, a
    /// power of two ≥ 8 / `decode_pieces`; rows per group, 1–8; workgroup size, a power of two
    /// from 64 and the lanes to 1,024; the MoE down-projection's combining form takes its own),
    /// kernel tuning,
    /// for every matrix as given; lanes 0 keeps them on `matvecq.comp`. `None`: (32, 1, 128)
    /// on GPUs (H200, Qwen3-8B decode, tok/s, with the passes unrolled as a fourth figure:
    /// 32x1x128x1 209; 32x2x128x2 208; 32x1x128x2 204; 64x1x128x2 195; 128x1x128x1 190;
    /// 32x1x128x4 181; 32x1x128x8 168; matvecq.comp 204).
    pub decode_kquant: Option<(u32, u32, u32)>,
    /// `decode_kquant` for Q6_K weights only, output heads included. `None`: as
    /// `decode_kquant`, but at least two rows a group for the `DEC_HEAD_ROWS` (65,536) rows
    /// or more of an output head (H200, `zinc matvec-cost`, Qwen3-8B's 151,936 × 4,096 head:
    /// 127.19 µs at two rows, 136.01 at one).
    pub decode_q6k: Option<(u32, u32, u32)>,
    /// `matvec_dec.comp`'s 16-byte pieces of a block per lane (1, 2 or 4; its `PB`) for every
    /// K-quant as given, kernel tuning. `None`: 2 for Q4_K, 1 for Q6_K.
    pub decode_pieces: Option<u32>,
    /// `matvec_dec.comp`'s passes whose loads a lane issues before their math (1, 2 or 4; its
    /// `PASSES`), kernel tuning. `None`: 1 (H200, tg128: Qwen3-8B 268.7 / 266.3 tok/s against
    /// 256.2 / 252.9 at 2 and 217.6 / 217.8 at 4; Qwen3-30B-A3B 260.3 / 258.2 against 230.1 /
    /// 232.6 and 187.9 / 189.3).
    pub decode_passes: Option<u32>,
    /// `matvec_dec.comp`'s PAIR at 2 pieces a lane (a lane's pieces one pair of Q4_K sub-blocks,
    /// or the two Q6_K quarter pairs that share high bits), kernel tuning. `None`: on at 2
    /// pieces (Q4_K's default; Q6_K's is 1: on pairs at 2 pieces, H200 `zinc matvec-cost`, its
    /// 1,024 × 4,096 took 5.37 µs against 6.07, but 4,096 × 12,288 18.35 against 17.72 and the
    /// 151,936-row output head 162.4 against 136.2; Qwen3-8B tg128 270.9 / 271.8 tok/s against
    /// 272.0 / 278.6).
    pub decode_pair: Option<bool>,
    /// Decode attention: about this many key slices at long contexts (1–128), kernel tuning.
    /// `None`: `ATTN_DEC_SLICES` (16; H200, Qwen3-8B tg64 at 4,096 tokens with a query head a
    /// workgroup: 16 216.7, 32 211.3 tok/s; before, with all of a KV head's: 16 172.1, 32
    /// 171.5, 64 163.2, 128 153.0; H100, session 29: 12 258.0 / 259.5, 16 258.6 / 259.2).
    pub attn_slices: Option<u32>,
    /// Decode attention: keys each invocation loads before it multiplies (2, 4 or 8), kernel
    /// tuning. `None`: 4.
    pub attn_ahead: Option<u32>,
    /// A decode step's q/k preparation (attn_dec_prep, and qk_prep.comp and rope.comp for one
    /// row): RoPE's cos and sin from the host, the CPU backend's values, made once a step for
    /// each of a model's rotations, instead of every workgroup stepping the angle and taking
    /// its sin and cos, kernel comparisons. `None`: on (H100, session 27: Qwen3-8B tg128 280.6
    /// tok/s against 277.9 / 278.0; RoPE left out altogether 280.1).
    pub attn_rope_table: Option<bool>,
    /// Decode attention over one slice (`attn_direct`) feeding a K-quant out-projection on
    /// `matvec_dec.comp`: the output quantized in Q8_0-style chunks of 32 that the projection
    /// reads with each chunk's own scale (its X32, as the down reads `glu_rows`' chunks), so a
    /// workgroup may hold one query head where Q8_K's blocks of 256 need two 128-wide heads:
    /// twice the workgroups, each with half the scores and values to make. The projection's
    /// input then rounds as llama.cpp's CUDA mat-vecs round it, not as the CPU's Q8_K. Not with
    /// early weights' out-projection waiting beside the attention (its input is Q8_K), not for
    /// heads of 256 or wider (one a workgroup already), and not once an out-projection refused
    /// the chunks (not on matvec_dec: it quantizes them afresh, once). Kernel comparisons.
    /// `None`: on (H100, session 28, alternating with session 27's build: Qwen3-8B tg128
    /// 298.7 / 297.6 tok/s against 289.4 / 289.6, 290.2 with the option off; Qwen3-30B-A3B
    /// 328.6 / 328.9 against 315.1 / 312.0).
    pub attn_x32: Option<bool>,
    /// Decode attention, timing only (the results are wrong): parts of attn_dec.comp's work
    /// left out, bits: 1 the q/k norms, 2 RoPE, 4 the scores, 8 the values, 16 the output's
    /// quantization (what a run gains without a part is what it costs). 0: none. Parts are
    /// left out of the two-pass form only: with any, the one-slice attention takes two passes
    /// (`attn_one_pass`).
    pub attn_ablate: u32,
    /// Decode attention: query heads a workgroup where the keys are split into slices (1, 2,
    /// 4 or 8; a larger value than a model's heads per KV head takes all of them), kernel
    /// tuning. `None`: 1 — a slice's keys are read by each of its KV head's query heads, from
    /// L2 after the first (H200, Qwen3-8B tg64 at 4,096 tokens, one call: all 4 heads 190.3
    /// tok/s, 2 heads 181.4, 1 head 211.3; 1 head at 16 slices 216.7).
    pub attn_heads: Option<u32>,
    /// Decode attention over at most this many keys (0–1,024) in one slice, each workgroup
    /// writing (and quantizing) its heads' output itself with no merge dispatch, kernel
    /// tuning. `None`: 128 (H200, tg128 from an empty context, one call: Qwen3-30B-A3B 206.8
    /// tok/s never, 220.1 up to 64 keys, 229.3 up to 128; Qwen3-8B 240.2, 240.3, 242.5).
    pub attn_direct: Option<u32>,
    /// The workgroup of decode steps' RMSNorms (64, 128, 256 or 512, within the device),
    /// kernel comparisons. `None`: `DECODE_NORM_WG`, 256 (H200, tg128, session 13, with the
    /// host polling its fences: Qwen3-8B 264.0 tok/s against 261.6 / 260.8 at 64, 261.1 at
    /// 512; Qwen3-30B-A3B, 2,048-wide rows, 252.5 against 250.6 / 249.0 at 64; session 11:
    /// Qwen3-8B 251.9 against 243.9 / 249.2 at 64; session 9: 244.9 at 64 against 239.1 at
    /// 512).
    pub decode_norm_wg: Option<u32>,
    /// Decode attention's workgroup size (128 or 256), kernel tuning. `None`: 256 for one
    /// slice (`attn_direct`) of one head a workgroup and, in two passes (`attn_one_pass`), for
    /// slices of 256 keys or more, else 128 (H200, Qwen3-8B tg64 at 4,096 tokens, 256-key slices: 226.3 tok/s against 221.0 /
    /// 219.9 at 128; 512 slower everywhere. One slice: at two heads a workgroup 128 was the
    /// faster on the H200, 241.2 / 244.6 against 236.3; at one head a workgroup, since
    /// `attn_x32`, 256 is, on the H100 in session 30: Qwen3-8B tg128 299.89 / 300.17 against
    /// 298.16 / 298.45, Qwen3-30B-A3B 330.48 against 327.59 / 327.54).
    pub attn_wg: Option<u32>,
    /// Decode attention's slices merged by the last workgroup of each KV head
    /// (`attn_dec.comp`'s merge, up to `MERGE_SPLITS` slices) instead of `attn_combine.comp`.
    /// `None`: off (H200, tok/s, in-kernel merge against attn_combine: Qwen3-8B 214.4, 214.0
    /// against 217.3; Qwen3-30B-A3B 178.3, 175.7 against 183.1; a plain-load merge, not
    /// shipped, 215.1 / 216.0 and 180.7 / 180.2).
    pub attn_merge: Option<bool>,
    /// Decode attention's keys and values in one pass (`attn_dec.comp`'s ONE_PASS: a running
    /// softmax a key slot, each value loaded with its key), where an invocation holds 8 of a
    /// head's dimensions (the head dimension 8 × the lanes a key) and no `attn_ablate` is
    /// given: `Some(true)` over every slice, `Some(false)` over none; kernel tuning. `None`:
    /// over every slice, split slices in workgroups of 128 unless `attn_wg` says otherwise.
    /// (H100, session 30, alternating with two passes: one slice only, Qwen3-8B tg128 296.51 /
    /// 296.43 tok/s against 293.82 / 294.80, Qwen3-30B-A3B 330.15 / 330.28 against 328.61 /
    /// 328.57; after 4,096 tokens over every slice in workgroups of 256, 245.63 / 245.78
    /// against 258.00 / 259.62: the driver compiled `attn_dec_prep_one` to 78 registers against
    /// 47, and 512 workgroups of 256 no longer fit the GPU at once. Session 31, in workgroups
    /// of 128, tg64 after 4,096 tokens: 258.65 / 258.31 / 259.11 / 258.16 / 259.02 against
    /// 257.49 / 254.68 / 258.19 / 257.19 / 255.73; after 1,024: 279.15 / 279.95 against
    /// 273.72 / 275.00.)
    pub attn_one_pass: Option<bool>,
    /// Decode attention over split slices with each key read once for this many of its KV
    /// head's query heads together (1, 2, 4 or 8; a larger value than a model's heads per KV
    /// head takes all of them): `attn_dec.comp`'s KROWS, a key's score made by a few
    /// invocations that hold whole 16-byte pieces of it, where an invocation holds 8 of a
    /// head's dimensions in the value pass and heads are at least 32 wide (`attn_rows_keys`
    /// keys an invocation a pass). Kernel tuning; 0 is off (split slices take the one-pass
    /// form of one query head a workgroup). `None`: off — the candidate default is 2 on GPUs,
    /// pending the GPU selftest of that exact form and Qwen3-30B-A3B after 4,096 tokens
    /// (`scripts/device/h200_s44_c.sh`). (H100, session 44, Qwen3-8B tg64 after 4,096 tokens,
    /// alternating, tok/s: 273.00 / 274.04 / 273.93 / 274.44 at 2 against 270.91 / 272.23 /
    /// 271.84 / 272.58 for the one-pass form, +0.7%; its attention 21.75 → 17.76 µs a layer by
    /// the clock, but the gate/up two stages later 27.50 → 30.76, unexplained. Session 43's
    /// forms at 4 heads: 236–249 against 269–273, their kernels with 256 bytes of local memory
    /// an invocation.)
    pub attn_rows: Option<u32>,
    /// `attn_rows`' keys an invocation loads a pass (2 or 4: `attn_dec_*rows2` or
    /// `attn_dec_*rows`). Kernel tuning. `None`: 2 (H100, session 43: at 4 heads 235.86 /
    /// 238.19 tok/s at 2 against 200.01 / 197.28 at 4).
    pub attn_rows_keys: Option<u32>,
    /// Threads per row of the integer-dot kernel on prompts (several tokens per invocation).
    /// `None`: 1 on CPU devices, 2 on GPUs.
    pub prompt_threads_per_row: Option<u32>,
    /// Integer dot products for quantized mat-vecs (`matvecq.comp`). `None`: wherever the device
    /// has shaderIntegerDotProduct; `Some(false)` keeps the float mat-vec (tests run both).
    pub int_dot: Option<bool>,
    /// Prompts multiply on cooperative matrices (`matmul_cm.comp`). `None`: wherever the device
    /// has them (16×16×16 f16, subgroups of 32); `Some(false)` keeps the integer-dot kernel.
    pub coopmat: Option<bool>,
    /// Prompts dequantize a quantized weight to f16 rows first and multiply those
    /// (`dequant_f16.comp`, then `matmul_cm_F16`) instead of dequantizing inside the mat-mul.
    /// `None`: on (H200, Qwen3-8B prompt 512: 4,913 → 5,721 tok/s).
    pub prompt_f16: Option<bool>,
    /// Quantized weights' f16 rows (`prompt_f16`) are kept for later prompts, up to this many
    /// MiB of device memory, instead of being decoded again for every prompt (and never past
    /// three quarters of the device's memory in all). `None`: half the memory of discrete GPUs
    /// of 64 GiB or more (H200, Qwen3-30B-A3B prompt 512: all 144 expert tensors then fit,
    /// 6,522 → 7,127 tok/s, runs ±500; H100 80 GB, session 28, alternating: 5,396 / 5,396
    /// tok/s at a quarter, 6,633 / 6,631 at 40 GiB, 6,709 at 55 GiB, runs ±660–950), a quarter
    /// on other devices of 32 GiB or more, none on smaller ones (whose memory the KV cache
    /// needs more). The copies stay once made: a server's later KV caches get what is left.
    pub prompt_weight_cache_mb: Option<u64>,
    /// The cooperative-matrix mat-mul's tile as (subgroups along weight rows, columns a step,
    /// subgroups along tokens): `matmul_cm.comp`'s SGM, BK and SGN (16·TM·SGN tokens × 64·SGM
    /// rows, TM from `coopmat_tm`). `None`: (2, 64, 2) with TM 4, where the device has the
    /// shared memory for it (128 tokens × 128 rows, 41 KiB), else (2, 64, 4) with TM 2 (the
    /// same tile, 45 KiB), else (1, 32, 4).
    pub coopmat_tile: Option<(u32, u32, u32)>,
    /// The cooperative-matrix mat-mul's 16-token accumulator tiles a subgroup (`matmul_cm.glsl`'s
    /// TM: 2 or 4; the tile's tokens become 16·TM·SGN). `None`: 4 with the tile 2x64x2 where
    /// the shared memory holds it and no tile is given, else 2.
    pub coopmat_tm: Option<u32>,
    /// `coopmat_tm` for the MoE mat-mul (`moe_tile`'s slots become 16·TM·SGN). `None`: 4 with
    /// the tile 2x64x2 where that fits and no MoE tile is given, else 2 (whatever
    /// `coopmat_tm` says).
    pub moe_tm: Option<u32>,
    /// MoE routing ranks every expert in one pass (up to 1,024 experts and 64 picks) instead
    /// of a round of workgroup reductions per pick; the same picks and weights for finite
    /// logits (NaN ones: ids 0..k−1 of weight 0). `None`: on (H200, Qwen3-30B-A3B tg64, one
    /// call: 204.9 / 205.9 tok/s on, 204.6 off — no faster, but one pass in place of k).
    pub route_rank: Option<bool>,
    /// MoE decode steps: the router that normalizes its input itself (`router_norm`) recorded
    /// before the norm it runs beside (the norm's dispatch held back until the next command,
    /// `Recorder::hold`), so that the long router starts first and the short norm after it;
    /// the same commands and results. Kernel comparisons. `None`: on (H100, session 32: the
    /// router, recorded second, started ~1.1 µs after the norm by the kernels' clock, and the
    /// stage ends with it; with q and k joined, Qwen3-30B-A3B tg128 335.82 / 332.47 tok/s
    /// against 327.81 / 327.71 with neither; alone not told apart from the noise).
    pub router_first: Option<bool>,
    /// Decode steps: a plain mat-vec on matvec_dec.comp held back until the next command, and
    /// the next one of the same kernel reading the same quantized input beside it (a step's k
    /// after its q, both Q4_K) joined to it in one dispatch (matvec_dec.comp's TWO, at the
    /// first's shape); the same rows' arithmetic. Kernel comparisons. `None`: on (H100,
    /// session 32: a stage's second and third dispatches started ~0.9 µs after the one before
    /// by the kernels' clock; Qwen3-8B tg128 298.41 / 298.46 tok/s against 296.79 / 296.76,
    /// the q/k/v stage's span 10.65 → 8.82 µs; Qwen3-30B-A3B ~+1%).
    pub decode_two: Option<bool>,
    /// MoE decode steps: the experts' down-projection and their weighted sum in one dispatch
    /// (`matvec_dec.comp`'s `MOE` = 2) instead of two, kernel comparisons. `None`: on (H200,
    /// Qwen3-30B-A3B tg64, one call: 200.7 / 195.1 tok/s apart, 202.3 / 201.2 fused).
    pub moe_fused_down: Option<bool>,
    /// Decode steps on K-quants: a residual add's mat-vec also computes the next RMSNorm
    /// (matvec_dec.comp's FUSE: the last workgroup of each 256-row block quantizes it, and the
    /// mat-vecs that read it apply its scale), one dispatch instead of two. `None`: off — `zinc
    /// selftest --vk-fuse-norm true` passes on the H200, but Qwen3-8B tg128 measured 239.2 /
    /// 247.3 / 244.5 tok/s with it against 250.4 / 247.8 / 250.7 without (in an earlier call
    /// +0.3% and +1.5%).
    pub fuse_norm: Option<bool>,
    /// Decode steps of a SwiGLU/GeGLU FFN on K-quants: the gate and up mat-vecs also compute
    /// the activation and its quantization for the down-projection (matvec_dec.comp's GLU: the
    /// last workgroup of each 256-row block of both does glu_quant.comp's work), a stage fewer
    /// a layer, the same bits. `None`: on. (H200, tg128 alternating on one build: Qwen3-8B
    /// 281.3 / 280.8 tok/s against 281.3 / 275.8 off, after 4,096 tokens 247.8 / 249.5 against
    /// 249.1 / 246.5, 30B-A3B 259.7 / 261.5 against 260.9 / 261.1 — no faster, fewer dispatches;
    /// with `fuse_norm` as well, 484 → 340 stages a MoE token, 258.9 / 260.2.)
    pub fuse_glu: Option<bool>,
    /// Decode steps: a gated FFN's gate and up projections in one dispatch whose workgroups
    /// each take 32 rows of both and compute their activation and its 8-bit quantization in
    /// one Q8_0-style chunk of 32 themselves (`matvec_dec.comp`'s GROWS: no counter, no other
    /// workgroup's rows, where the `fuse_glu` tail waits for a 256-row block's last workgroup);
    /// the down-projection reads each chunk's own scale (its X32), so the activation rounds
    /// as llama.cpp's CUDA mat-vecs round it, not as the CPU's Q8_K. Kernel tuning. `None`: on
    /// (H200 tg128, alternating on one build: Qwen3-8B 305.7 / 304.8 / 303.9 tok/s against
    /// 295.9 / 294.6 / 295.4 in the tail; Qwen3-30B-A3B's experts at one row a group 319.6 /
    /// 320.6 against 298.3 / 295.7, at four rows 267.6 / 267.0 / 267.7).
    pub glu_rows: Option<bool>,
    /// Rows of the gate (and as many of the up) a group of lanes takes under `glu_rows`: 1, 2
    /// or 4, the workgroup (32 / rows) groups so that its 32 rows stay one chunk; `Some` sets
    /// both forms. Kernel tuning. `None`: 4 for dense FFNs, 1 for MoE experts (H200 tg128:
    /// Qwen3-8B at 2 rows 302.4 / 303.3 tok/s, at 1 294.5 / 295.2, against 304.2 / 304.1 at 4;
    /// Qwen3-30B-A3B at 2 rows 303.8 / 302.7 against 319.6 / 320.6 at 1).
    pub glu_rows_nr: Option<u32>,
    /// Decode steps of one token: the q/k norms, RoPE and the K/V store done by the decode
    /// attention itself (`attn_dec.comp`'s PREP) instead of qk_prep.comp before it, one stage
    /// fewer a layer; the same arithmetic, held to the separate kernels within 10⁻⁵ of the
    /// largest output (a compiler may contract the two kernels differently). Kernel tuning.
    /// `None`: on (H200 tg128: Qwen3-8B +2.3 to +2.9%, after 4,096 tokens +1.8%, Qwen3-30B-A3B
    /// +3.5 to +3.7%).
    pub fuse_prep: Option<bool>,
    /// Decode steps of one token: early weights — the mat-vecs that read a pre-norm (q/k/v,
    /// the gate/up, the output head; norm_quant.comp's or a FUSE mat-vec's) or the attention's
    /// output (o) recorded beside their input's producer, without the pipeline barrier between
    /// them; their workgroups load their weights while the producer runs and wait in the
    /// shader for its signal (sync.glsl), the same bits as with the barriers. Only on devices
    /// that start a queue's dispatches in order (NVIDIA's driver and CPU devices). `None`: off
    /// — slower on the H200 in every form measured (Qwen3-8B tg128, alternating on one build: 313.6 / 313.9 tok/s off, 277.3 / 279.3 with every consumer waiting (147
    /// against 256 dependent stages a token), q/k/v alone 287.9 / 287.2, o alone 298.9 /
    /// 299.7, gate/up alone 282.1 / 290.3, the head alone 296.0 / 292.4, no weights touched
    /// first 295.1 / 295.6; polling by volatile loads instead of atomics 276.3 / 279.3, with a
    /// backoff 271.0–279.0; after 4,096 tokens 245.0 / 244.2 against 270.6 / 273.7;
    /// Qwen3-30B-A3B 310.2 / 315.9 against 326.6 / 331.6). A workgroup resident and waiting
    /// costs more than the barrier it spares.
    pub early_weights: Option<bool>,
    /// Under `early_weights`, the consumers that wait (the others keep their barrier): bit 0
    /// q/k/v, bit 1 the out-projection, bit 2 the gate/up (`glu_rows`), bit 3 the output head.
    /// Kernel tuning. `None`: all (15).
    pub early_mask: Option<u32>,
    /// Under `early_weights`, the 32-byte pieces of its rows each invocation of a waiting
    /// mat-vec loads before it waits (0 to 8). Kernel tuning. `None`: 8.
    pub early_touch: Option<u32>,
    /// MoE decode steps: rows a group of lanes in the experts' K-quant mat-vecs (1–8; the
    /// gate/up and the down-projection with the weighted sum), kernel tuning. `None`: as a
    /// dense weight of the expert's rows (one row; H200, Qwen3-30B-A3B tg128 at 2, at 32 lanes:
    /// 254.9 / 257.6 tok/s against 256.2 / 255.2 — within the noise; at `moe_lanes` 16x8:
    /// 308.1 / 310.6 / 309.6 against 312.2 / 310.2 / 311.5).
    pub moe_rows: Option<u32>,
    /// MoE decode steps: lanes a group of rows in the experts' mat-vecs on `matvec_dec.comp`, as
    /// (gate and up, down with its weighted sum), each a power of two from 8 to 64, kernel
    /// tuning; a down given explicitly takes that many lanes a slot, so its workgroup can fall
    /// below 64 invocations (at fewer slots), which leaves the next pre-norm out of it. `None`:
    /// 16 for gate and up; for the down in its combining form (`moe_fused_down`), 64
    /// invocations a workgroup over its groups (one a slot, up to 8; at most 32 lanes): 8 lanes
    /// at 8 experts a token, 16 at 3 or 4; a separate down keeps its format's lanes (H200,
    /// Qwen3-30B-A3B tg128,
    /// alternating: 313.5 / 312.9 / 313.3 tok/s against 303.4 / 303.9 / 302.5 at the format's
    /// 32 for both; 32x8 307.0 / 307.8 / 307.3; 32x8 at two rows a group 305.6 / 305.2 /
    /// 304.8; one run each: 32x16 297.4, 16x32 294.6, 8x32 299.8, 16x16 302.5).
    pub moe_lanes: Option<(u32, u32)>,
    /// MoE decode steps: passes (1, 2 or 4) whose loads each lane of the experts' mat-vecs on
    /// `matvec_dec.comp` issues before their math, as (gate and up, down with its weighted
    /// sum), kernel tuning (`decode_passes` for the experts alone: at 16 lanes a Qwen3-30B-A3B
    /// gate or up row of 8 blocks is two passes, its down's row of 3 blocks three at 8 lanes).
    /// `None`: `decode_passes`'s.
    pub moe_passes: Option<(u32, u32)>,
    /// MoE decode steps: the invocations of a workgroup of the experts' gate and up mat-vecs on
    /// `matvec_dec.comp` in the activation's tail (64, 128 or 256, within the device's; with
    /// `glu_rows` the workgroup is 32 / `glu_rows_nr` groups of lanes), kernel tuning. `None`:
    /// their format's decode shape's (128; H200, Qwen3-30B-A3B tg128 in the tail: 64 297.5 /
    /// 287.1 tok/s, 256 289.2 / 289.9, against 298.3 / 295.7).
    pub moe_wg: Option<u32>,
    /// MoE decode steps: the router's mat-vec also routes (matvec.comp's ROUTE: its last
    /// workgroup of each token ranks the experts as moe_route.comp does), one dispatch instead
    /// of two. `None`: on.
    pub router_routes: Option<bool>,
    /// MoE decode steps: a router whose input is the RMSNorm recorded just before it reads the
    /// norm's input and normalizes it itself (matvec.comp's SN, to the bit as the norm does),
    /// recorded beside the norm instead of in a stage after it. `None`: on where it applies.
    pub router_norm: Option<bool>,
    /// Timing only (**the picks are wrong**): how much of the router that routes runs. 0, all
    /// of it; 1, its last workgroup writes experts 0..k−1 without ranking (the ranking's cost
    /// is the difference); 2, no counter either, the first workgroup writes them once its own
    /// logits are stored (the counter's cost); 3, as 1 with picks scattered over the experts
    /// as ranked ones are (4 bits of each pick's logit); 4, ranked, then 1's experts written;
    /// 5, ranked from logits read through plain loads instead of coherent ones; 6, ranked from
    /// stand-in logits made in place (no loads); 7, as 6 without the barrier that acquires
    /// the others' logits.
    /// Where the router does not route, nothing.
    pub router_stop: u32,
    /// MoE decode steps: the invocations of a workgroup of the router that routes, 64 or 128,
    /// kernel tuning (at 128 each of up to 128 experts is ranked by an invocation of its own,
    /// and a workgroup takes 128 / `threads_per_row` rows; the same picks and weights; past
    /// 128 experts the general ranking keeps 64 of them busy). `None`: 128 (H200, Qwen3-30B-A3B
    /// tg128, alternating: 300.2 / 300.2 / 301.0 tok/s against 298.4 / 298.0 / 296.4 at 64, +1.0%).
    pub router_wg: Option<u32>,
    /// Prompts' f32 mat-vecs (an MoE router over a prompt's tokens, where its few rows leave
    /// the tiled mat-mul's workgroups too few): tokens a workgroup column takes together, each
    /// weight vector loaded once for all of them (1–8; at 16 lanes a row or fewer, 16 rows a
    /// workgroup; 1: one token a workgroup column, as decode steps), kernel tuning. The same
    /// bits as one token at a time at the same lanes a row (at the GPUs' default 64 lanes a
    /// row, one token a column sums in another order than 16 do). `None`: 8 (H100, Qwen3-30B-A3B
    /// prompt 512: the 128 × 2,048 router took 99 µs a layer by the profile, one token a
    /// workgroup column, each reading the whole router from L2).
    pub matvec_tokens: Option<u32>,
    /// Prompts' q/k norms, RoPE and K/V store a subgroup a head (`qk_prep_rows.comp`, the
    /// same bits as `qk_prep.comp`'s workgroup a head; subgroups of 8 to 64 lanes), kernel
    /// comparisons. `None`: on (H100, Qwen3-8B prompt of 512, session 38: 11,007.7 against
    /// 10,845.7 tok/s, +1.5%; `qk_prep` had taken 61 µs a layer, as much as the attention).
    /// The conformance suite's GPU-style run on lavapipe takes it, the others keep `qk_prep`.
    pub prep_rows: Option<bool>,
    /// Prompts' rounded activations (`act_quant.comp`, Q8_0 and Q8_K blocks): each block's
    /// largest magnitude found by subgroup shuffles and one barrier (`act_quant_sg`, a compiled
    /// variant), where the shared-memory tree takes a barrier a level (six at 64 invocations);
    /// the same element either way.
    /// Kernel comparisons. `None`: on (H100, session 38: alone within 0.2% on Qwen3-8B's prompt
    /// of 512; with `glu_round` and `norm_round` on top of `mm_beside` and `prep_rows`, +1.4%).
    /// The conformance suite's second float run takes it, the first keeps the tree.
    pub act_quant_sg: Option<bool>,
    /// A prompt's cooperative-matrix mat-muls that read a rounding another one already read
    /// since it was made (k and v after q, up after gate: fresh outputs, the same input) are
    /// recorded beside it, with no barrier between: at a 512-token prompt Qwen3-8B's k and v
    /// are 32 workgroups each, a quarter of an H100, each walking every column as q's 128
    /// do. Kernel
    /// comparisons. `None`: on (H100, session 38, Qwen3-8B prompt of 512: 11,637.7 against
    /// 10,831.3 tok/s, +7.4%; Qwen3-30B-A3B with `prep_rows`: 7,772.8 against 7,220.0).
    pub mm_beside: Option<bool>,
    /// A prompt's gated activation computed by the dispatch that rounds it for the
    /// down-projection (`act_quant_glu`), where `elementwise` and `act_quant` take two; the
    /// same bits. Kernel comparisons; `None`: on (H100, session 38: +0.5% alone on Qwen3-8B's
    /// prompt of 512; see `act_quant_sg` for the three together). The conformance suite's
    /// float runs take it.
    pub glu_round: Option<bool>,
    /// A prompt's pre-norm computed with the rounding its projections read in one dispatch
    /// (`rms_norm_round`), where `rms_norm` and `act_quant` take two; the same bits. Kernel
    /// comparisons; `None`: on (H100, session 38: +0.2% alone; see `act_quant_sg`). The
    /// conformance suite's float runs take it.
    pub norm_round: Option<bool>,
    /// Testing: MoE routing ranks every router's experts the general way (route.glsl), where
    /// up to 128 it takes the small ranking; the same picks and weights bit for bit.
    pub route_general: bool,
    /// Commands in the first piece of a recording sent to the device, and the most in a later
    /// one (1–4,096; each later piece `submit_growth` times the one before, up to it), kernel
    /// tuning. `None`: (8, 512): the host's gap between tokens is mostly the recording of the
    /// first piece, so it stays small (H200, Qwen3-30B-A3B tg128 at 8x64: 25.5 / 26.6 µs of the
    /// host's a token, against 54–63 µs at 16x64), and each boundary between pieces costs the
    /// device ~13 µs (H100, session 39's clock), so the later ones grow large. See
    /// `submit_adaptive` for session 40's measurements.
    pub submit_chunks: Option<(u32, u32)>,
    /// Each later piece of a recording is this many times the one before (up to
    /// `submit_chunks`' most; 2 to 16), kernel tuning. `None`: 4 (see `submit_adaptive`).
    pub submit_growth: Option<u32>,
    /// Each piece of a recording sent before its end signals a fence of its own (true, the
    /// default), or only the recording's last submit does (`false`: a fence's signal follows
    /// every command submitted before it; the flying list's last slot still takes one).
    /// Adaptive pieces fence every piece whatever this says. Kernel tuning (H100, session 40,
    /// Qwen3-8B tg128 with 8x64 pieces growing 2×: 303.4 / 303.0 tok/s without, against 299.7 /
    /// 301.3; within the noise after 4,096 tokens and on the MoE).
    pub piece_fences: Option<bool>,
    /// Adaptive pieces: besides at its limit (`submit_chunks`, `submit_growth`), a piece goes
    /// to the device as soon as it holds a first piece's commands and the device has finished
    /// every piece before it (its last fence read, `adaptive_poll_us`), so pieces may grow fast
    /// (fewer boundaries) where the host keeps ahead of the device, and the device does not
    /// wait for a big piece where it does not. Every piece then takes a fence. `None`: on.
    /// H100, session 40, tok/s, alternating on one build: 8x512 pieces growing 4× with it,
    /// against the earlier 8x64 growing 2× — Qwen3-8B tg128 312.2 / 310.3 against 299.7 /
    /// 301.3 (growing 4× without it: 312.2 / 299.0, the host slower in the second); after
    /// 4,096 tokens 265.6 / 264.6 against 253.0 / 247.6; Qwen3-30B-A3B tg128 339.9 / 347.4
    /// against 336.5 / 336.6 (session 39: growing 4× without it, 3–5% slower in one call).
    pub submit_adaptive: Option<bool>,
    /// Adaptive pieces read the last piece's fence at most once in this many µs (0: at every
    /// command; at most 1,000), kernel tuning. `None`: 4 — a read per command (~340 a
    /// Qwen3-30B-A3B step) cost the host more than the device's idle µs it saved (H100,
    /// session 40: Qwen3-30B-A3B tg128 356.8 / 356.9 tok/s against 353.5 / 354.5 at 0, its
    /// recording 852–864 µs a step against 939–1,000; Qwen3-8B the same within the noise).
    pub adaptive_poll_us: Option<u32>,
    /// `moe_matmul_cm.comp`'s tile, as `coopmat_tile`. `None`: (2, 64, 2) with TM 4 where it
    /// fits (`moe_tm`), else (2, 64, 4), 128 slots × 128 rows either way (H200, Qwen3-30B-A3B
    /// prompt 512 at TM 2, tok/s: 2x64x4 5,502; 2x32x2 5,068; 2x32x4 5,045;
    /// 1x32x2 4,394; 1x64x4 3,706; 2x64x2 3,603–3,656 in three earlier runs, where each
    /// invocation dequantizes 64 weights a step against 32 in the others).
    pub moe_tile: Option<(u32, u32, u32)>,
    /// Single-token attention over few keys follows the CPU backend's arithmetic (f16 Q and V
    /// accumulator, a key at a time), so greedy decoding tracks the CPU oracle. `None`: on CPU
    /// devices (lavapipe in CI); GPUs split the keys across workgroups instead.
    pub cpu_attention: Option<bool>,
    /// Time every dispatch with GPU timestamps (`zinc bench --profile`); see
    /// [`VulkanBackend::profile`].
    pub profile: bool,
    /// Kernels left out of every recording, by name as profiles print them (`attn_dec`, or
    /// one shape: `matvec_dec_Q4_K 12288×4096`): what a run loses in speed without them is
    /// what they cost, barriers included. Or one barrier mode: `barrier` (compute-to-compute
    /// barriers left out, but the one after an MoE router), `barrier-exec` (execution
    /// dependencies without memory barriers), `barrier-read` (writes made visible to reads
    /// only). Or `record`: no command reaches the driver (command buffers go empty), so a
    /// step's recording time is the host's own part of it. **The results are wrong** (or may
    /// be); for timing only.
    pub skip_kernels: Vec<String>,
    /// Timing only: before every barrier between dependent commands, this many more dependent
    /// stages of one empty workgroup each (`nop.comp`), so the cost of a stage on its own
    /// (barrier, launch, drain) is the slope of a run's time against it. Results stay right;
    /// runs are slower.
    pub pad_stages: u32,
    /// The host waits for the device by polling its fences instead of sleeping on them, for
    /// up to 20 ms a wait (then it sleeps): a decode step's result reaches the host without the
    /// driver's wake-up latency, at the cost of a busy core. `None`: on for GPUs (H200, tg128,
    /// alternating: Qwen3-8B 257.2 / 261.3 tok/s against 254.1 / 254.9 sleeping, the device
    /// idle 51–97 µs between tokens against 132–145; after 4,096 tokens, tg64, 235.0 / 232.0
    /// against 227.7 / 228.4; Qwen3-30B-A3B 249.7 / 244.7 against 242.4 / 241.6), off on CPU
    /// devices (where the host's cores run the device).
    pub spin_wait: Option<bool>,
    /// Decode steps recorded one ahead: while the device runs a step, the host records the
    /// next (its token not yet known) into one command buffer, and submits it whole once the
    /// token is written into its upload — no pieces, and no recording between the device's
    /// steps. Anything else recorded in between drops the step ahead (it is recorded again in
    /// the ordinary way). Off while profiling, clocking, ablating or recording dry. `None`: on.
    pub step_ahead: Option<bool>,
    /// Ask the driver for each pipeline's compiled statistics (VK_KHR_pipeline_executable_
    /// properties: registers, shared memory, … as the driver names them), for
    /// `VulkanBackend::pipeline_stats`. Off by default (capturing them may cost pipeline
    /// creation time); where the device lacks the extension, asking is an error that says so.
    pub pipeline_stats: bool,
    /// Run the clocked form of every kernel that has one (shaders/clock.glsl: each
    /// workgroup's start and end on the device's clock) and keep each dispatch's label, so
    /// that `VulkanBackend::clock_step` can say where a step's time went, stage by stage:
    /// between the stages, while their workgroups start, and inside them. Timing of the
    /// instrumented run is not the plain one's. Off by default; where the device lacks
    /// VK_KHR_shader_clock (the SM's and the device's clock), asking is an error that says so.
    pub clock: bool,
}

/// `VulkanOptions` resolved for one device: every default applied, every given value checked.
pub(super) struct Tuning {
    /// Mat-vec threads per weight row: 1 on CPU devices (no barriers), 64 on GPUs (H200 decode:
    /// 8 → 19.5, 16 → 25.7, 32 → 28.6, 64 → 30.9 tok/s).
    pub(super) threads_per_row: u32,
    /// Threads per row of the integer-dot mat-vec on decode steps: 1 on CPU devices, 16 on GPUs
    /// (H200 decode, Qwen3-8B, after the session-4 fusions: tg64 at 16 → 180, 64 → 146 tok/s;
    /// 32 gave 170 at tg128).
    pub(super) q_threads_per_row: u32,
    /// Threads per row of the integer-dot kernel on prompts (H200, Qwen3-8B prompt 512:
    /// 32 → 189, 16 → 349, 8 → 582, 4 → 881, 2 → 1082 tok/s).
    pub(super) p_threads_per_row: u32,
    /// The integer-dot mat-vec's shape on decode steps: [threads per row, rows per group of
    /// them, workgroup size] (`matvecq.comp`'s TPR, NR, WG).
    pub(super) decode_matvec: [u32; 3],
    /// matvec_dec.comp's shape on decode steps of [Q4_K, Q6_K] weights: [lanes per group of
    /// rows, rows per group, workgroup size, pieces of a block per lane] (its LPR, NR, WG, PB);
    /// lanes 0: matvecq.comp instead.
    pub(super) decode_kquant: [[u32; 4]; 2],
    /// The Q4_K shape's rows per group is the default's, one below `DEC_NR2_ROWS` rows (no
    /// shape was given).
    pub(super) decode_rows_auto: bool,
    /// The Q6_K shape's rows per group is at least two from `DEC_HEAD_ROWS` rows up (no Q6_K
    /// shape of its own was given: `decode_kquant` alone leaves output heads this rule).
    pub(super) q6k_rows_auto: bool,
    /// Quantized mat-vecs take the integer-dot path (see [`VulkanOptions::int_dot`]).
    pub(super) int_dot: bool,
    /// Mat-vec row reductions may use subgroup shuffles.
    pub(super) shuffle: bool,
    /// See [`VulkanOptions::cpu_attention`].
    pub(super) cpu_attention: bool,
    /// See [`VulkanOptions::coopmat`].
    pub(super) coopmat: bool,
    /// `matmul_cm.comp`'s specialization: [workgroup size, SGM, BK].
    pub(super) cm_spec: [u32; 3],
    /// Its TM (see [`VulkanOptions::coopmat_tm`]).
    pub(super) cm_tm: u32,
    /// `moe_matmul_cm.comp`'s TM (see [`VulkanOptions::moe_tm`]).
    pub(super) moe_tm: u32,
    /// `moe_matmul_cm.comp`'s: [workgroup size, SGM, BK].
    pub(super) moe_spec: [u32; 3],
    /// See [`VulkanOptions::moe_fused_down`].
    pub(super) moe_fused_down: bool,
    /// See [`VulkanOptions::fuse_norm`].
    pub(super) fuse_norm: bool,
    /// See [`VulkanOptions::fuse_glu`].
    pub(super) fuse_glu: bool,
    /// See [`VulkanOptions::glu_rows`].
    pub(super) glu_rows: bool,
    /// See [`VulkanOptions::glu_rows_nr`]: [dense FFNs, MoE experts].
    pub(super) glu_rows_nr: [u32; 2],
    /// See [`VulkanOptions::fuse_prep`].
    pub(super) fuse_prep: bool,
    /// See [`VulkanOptions::early_weights`]: the consumers that wait (`early_mask`), 0 where
    /// early weights are off or the device does not allow them.
    pub(super) early_weights: u32,
    /// See [`VulkanOptions::early_touch`].
    pub(super) early_touch: u32,
    /// See [`VulkanOptions::moe_rows`].
    pub(super) moe_rows: Option<u32>,
    /// See [`VulkanOptions::moe_lanes`]: [gate and up, down]; a down of 0 takes 64 invocations
    /// over its groups.
    pub(super) moe_lanes: [u32; 2],
    /// See [`VulkanOptions::moe_passes`] (`None`: the dense shapes' passes).
    pub(super) moe_passes: Option<[u32; 2]>,
    /// See [`VulkanOptions::moe_wg`].
    pub(super) moe_wg: Option<u32>,
    /// See [`VulkanOptions::router_routes`].
    pub(super) router_routes: bool,
    /// See [`VulkanOptions::router_norm`].
    pub(super) router_norm: bool,
    /// See [`VulkanOptions::router_stop`].
    pub(super) router_stop: u32,
    /// See [`VulkanOptions::router_wg`].
    pub(super) router_wg: u32,
    /// See [`VulkanOptions::matvec_tokens`].
    pub(super) matvec_tokens: u32,
    /// See [`VulkanOptions::prep_rows`].
    pub(super) prep_rows: bool,
    /// See [`VulkanOptions::act_quant_sg`].
    pub(super) act_quant_sg: bool,
    /// See [`VulkanOptions::mm_beside`].
    pub(super) mm_beside: bool,
    /// See [`VulkanOptions::glu_round`].
    pub(super) glu_round: bool,
    /// See [`VulkanOptions::norm_round`].
    pub(super) norm_round: bool,
    /// See [`VulkanOptions::route_general`].
    pub(super) route_general: bool,
    /// See [`VulkanOptions::route_rank`].
    pub(super) route_rank: bool,
    /// See [`VulkanOptions::router_first`].
    pub(super) router_first: bool,
    /// See [`VulkanOptions::decode_two`].
    pub(super) decode_two: bool,
    /// See [`VulkanOptions::prompt_f16`].
    pub(super) prompt_f16: bool,
    /// Bytes of kept f16 rows at the start (`VulkanOptions::prompt_weight_cache_mb`; the
    /// backend counts down its own copy).
    pub(super) f16_budget: u64,
    /// See [`VulkanOptions::attn_merge`].
    pub(super) attn_merge: bool,
    /// See [`VulkanOptions::attn_one_pass`] (`None`: every slice).
    pub(super) attn_one_pass: Option<bool>,
    /// See [`VulkanOptions::attn_rows`] (0: off).
    pub(super) attn_rows: usize,
    /// See [`VulkanOptions::attn_rows_keys`].
    pub(super) attn_rows_keys: u32,
    /// See [`VulkanOptions::attn_wg`] (`None`: by the plan: one slice of one head a workgroup,
    /// or in two passes the slice's length).
    pub(super) attn_wg: Option<u32>,
    /// See [`VulkanOptions::attn_ahead`].
    pub(super) attn_ahead: u32,
    /// See [`VulkanOptions::attn_ablate`].
    pub(super) attn_ablate: u32,
    /// See [`VulkanOptions::attn_rope_table`].
    pub(super) attn_rope_table: bool,
    /// See [`VulkanOptions::attn_x32`].
    pub(super) attn_x32: bool,
    /// See [`VulkanOptions::attn_slices`].
    pub(super) attn_slices: usize,
    /// See [`VulkanOptions::attn_heads`].
    pub(super) attn_heads: usize,
    /// See [`VulkanOptions::attn_direct`].
    pub(super) attn_direct: usize,
    /// See [`VulkanOptions::decode_norm_wg`].
    pub(super) decode_norm_wg: u32,
    /// See [`VulkanOptions::submit_chunks`] and `submit_growth` (the recorder's).
    pub(super) chunks: [u32; 3],
    /// See [`VulkanOptions::spin_wait`] (the recorder's).
    pub(super) spin_wait: bool,
    /// See [`VulkanOptions::step_ahead`].
    pub(super) step_ahead: bool,
    /// See [`VulkanOptions::piece_fences`] (the recorder's).
    pub(super) piece_fences: bool,
    /// See [`VulkanOptions::submit_adaptive`] (the recorder's).
    pub(super) submit_adaptive: bool,
    /// See [`VulkanOptions::adaptive_poll_us`] (the recorder's).
    pub(super) adaptive_poll: std::time::Duration,
    /// See [`VulkanOptions::pad_stages`] (the recorder's).
    pub(super) pad_stages: u32,
}

/// The most padding stages (`VulkanOptions::pad_stages`) a barrier takes.
pub(super) const MAX_PAD_STAGES: u32 = 8;

/// `given` where it is `ok`, `default` where nothing is given; a value given but not `ok` is
/// an error that names it (`what`).
fn checked<T: Copy>(
    given: Option<T>,
    default: T,
    ok: impl Fn(T) -> bool,
    what: impl Fn(T) -> String,
) -> Result<T, VulkanError> {
    match given {
        None => Ok(default),
        Some(v) if ok(v) => Ok(v),
        Some(v) => Err(VulkanError::BadOption(what(v))),
    }
}

/// `VulkanOptions::early_mask`'s bits: q/k/v, the out-projection, the gate/up, the head.
pub(super) const EARLY_QKV: u32 = 1;
pub(super) const EARLY_O: u32 = 2;
pub(super) const EARLY_GLU: u32 = 4;
pub(super) const EARLY_HEAD: u32 = 8;
const EARLY_ALL: u32 = 15;

/// Whether the device starts a queue's dispatches in order, each after every workgroup of those
/// recorded before it has started — what early weights' spinning workgroups need so as never
/// to keep their producer from running (across submits too: a producer and its consumers may
/// fall into two): NVIDIA's driver, and CPU devices (lavapipe runs a queue's dispatches one
/// after another).
fn in_order_dispatch(info: &DeviceInfo) -> bool {
    const NVIDIA: u32 = 0x10de;
    info.vendor_id == NVIDIA || info.kind == crate::DeviceKind::Cpu
}

impl Tuning {
    /// The Q6_K decode shape (`decode_kquant[1]`) for a weight of `rows` rows: an output head's
    /// (`DEC_HEAD_ROWS` or more) at least two rows a group of lanes, each activation load shared
    /// by both, unless a Q6_K shape was given (`q6k_rows_auto`).
    pub(super) fn q6k_shape(&self, rows: usize) -> [u32; 4] {
        let mut s = self.decode_kquant[1];
        if self.q6k_rows_auto && rows >= DEC_HEAD_ROWS {
            s[1] = s[1].max(2);
        }
        s
    }

    pub(super) fn resolve(opts: &VulkanOptions, info: &DeviceInfo) -> Result<Tuning, VulkanError> {
        let on_cpu = info.kind == crate::DeviceKind::Cpu;
        let tpr_ok = |t: u32| t.is_power_of_two() && t <= 64;
        // One option, two defaults: the float and the integer-dot decode mat-vecs.
        let tpr = |default| {
            checked(opts.threads_per_row, default, tpr_ok, |t| {
                format!("threads per row {t} (a power of two ≤ 64)")
            })
        };
        let threads_per_row = tpr(if on_cpu { 1 } else { 64 })?;
        let q_threads_per_row = tpr(if on_cpu { 1 } else { 16 })?;
        // The integer-dot mat-vec reduces rows with subgroup shuffles.
        let p_threads_per_row = checked(
            opts.prompt_threads_per_row,
            if on_cpu { 1 } else { 2 },
            tpr_ok,
            |t| format!("prompt threads per row {t} (a power of two ≤ 64)"),
        )?;
        let plan = kernel_plan(info);
        let int_dot = opts.int_dot.unwrap_or(true) && plan.int_dot;
        let shuffle = info.subgroup_shuffle;
        let cpu_attention = opts.cpu_attention.unwrap_or(on_cpu);
        let coopmat = opts.coopmat.unwrap_or(true) && plan.coopmat;
        let shared_for = |tm: u32, (m, k, n): (u32, u32, u32)| {
            cm_shared_bytes(m, k, n, tm) <= info.max_shared_memory
        };
        let shared_ok = |t: (u32, u32, u32)| shared_for(2, t);
        let tm_of = |given: Option<u32>, default: u32| {
            checked(
                given,
                default,
                |t| t == 2 || t == 4,
                |t| format!("cooperative-matrix accumulator tiles {t} (2 or 4)"),
            )
        };
        // The dense mat-mul: 4 accumulator tiles a subgroup over 2x64x2 (128 tokens × 128
        // rows, as 2x64x4 at 2) where the shared memory holds it (H200, Qwen3-8B pp512: 9,660
        // tok/s against 7,955 for 2x64x4 at 2; at 4, 2x32x2 5,159, 1x32x4 4,780, 2x32x4 4,857,
        // 1x64x2 3,446).
        let wide = shared_for(4, (2, 64, 2)) && opts.coopmat_tile.is_none();
        let cm_tm = tm_of(opts.coopmat_tm, if wide { 4 } else { 2 })?;
        // The MoE mat-mul the same way (H200, Qwen3-30B-A3B pp512: 7,877 tok/s against 7,298
        // for 2x64x4 at 2).
        let moe_wide = shared_for(4, (2, 64, 2)) && opts.moe_tile.is_none();
        let moe_tm = tm_of(opts.moe_tm, if moe_wide { 4 } else { 2 })?;
        let valid = |&(m, k, n): &(u32, u32, u32)| {
            (1..=2).contains(&m) && (k == 32 || k == 64) && (n == 2 || n == 4)
        };
        let tile = |given, default, what: &'static str| {
            let default = if shared_ok(default) {
                default
            } else {
                (1, 32, 4)
            };
            checked(
                given,
                default,
                |t| valid(&t) && shared_ok(t),
                |(m, k, n)| {
                    format!(
                        "{what} tile {m}x{k}x{n} (1–2 x 32 or 64 x 2 or 4, within the device's {} \
                     bytes of shared memory)",
                        info.max_shared_memory
                    )
                },
            )
        };
        let dense_default = if cm_tm == 4 { (2, 64, 2) } else { (2, 64, 4) };
        let (sgm, bk, sgn) = tile(opts.coopmat_tile, dense_default, "cooperative-matrix")?;
        let cm_spec = [32 * sgn * sgm, sgm, bk];
        let moe_default = if moe_tm == 4 { (2, 64, 2) } else { MOE_CM_TILE };
        let (m, k, n) = tile(opts.moe_tile, moe_default, "MoE cooperative-matrix")?;
        let moe_spec = [32 * n * m, m, k];
        // A tile and TM given that do not fit together are refused; defaults are as before
        // (only devices with cooperative matrices run these kernels).
        let dense_given = opts.coopmat_tm.is_some() || opts.coopmat_tile.is_some();
        let moe_given = opts.moe_tm.is_some() || opts.moe_tile.is_some();
        for (what, given, tm, (m, k, n)) in [
            ("", dense_given, cm_tm, (sgm, bk, sgn)),
            ("MoE ", moe_given, moe_tm, (m, k, n)),
        ] {
            if given && !shared_for(tm, (m, k, n)) {
                return Err(VulkanError::BadOption(format!(
                    "{what}cooperative-matrix tile {m}x{k}x{n} with {tm} accumulator tiles: \
                     more than the device's {} bytes of shared memory",
                    info.max_shared_memory
                )));
            }
        }
        const GIB: u64 = 1 << 30;
        let f16_budget = match opts.prompt_weight_cache_mb {
            Some(mb) => mb << 20,
            // (Half only of a discrete GPU's own memory: an integrated GPU's is the host's.)
            None if info.vram >= 64 * GIB && info.kind == crate::DeviceKind::Discrete => {
                info.vram / 2
            }
            None if info.vram >= 32 * GIB => info.vram / 4,
            None => 0,
        };
        let (t, r, w) = checked(
            opts.decode_matvec,
            (q_threads_per_row, 1, 128),
            |(t, r, w)| {
                tpr_ok(t)
                    && (1..=16).contains(&r)
                    && r.is_power_of_two()
                    && w.is_power_of_two()
                    && (t..=info.max_workgroup.min(1024)).contains(&w)
            },
            |(t, r, w)| {
                format!(
                    "decode mat-vec shape {t}x{r}x{w} (threads a power of two ≤ 64, rows a \
                     power of two ≤ 16, a power-of-two workgroup of at least the threads, at \
                     most the device's {} and 1,024)",
                    info.max_workgroup
                )
            },
        )?;
        let decode_matvec = [t, r, w];
        // [Q4_K, Q6_K]: 32 bytes of a Q4_K block's quants a lane, 16 of Q6_K's (H200,
        // Qwen3-8B tg64: 211.5 / 213.6 tok/s with both at 16, 238.4 / 239.4 with both at 32,
        // 194.0 at 64; the profile: Q4_K 12,288 × 4,096 25.4 → 20.5 µs, Q6_K 4,096 × 12,288
        // 22.6 → 24.0 µs at 32).
        // Q4_K: two rows a group of lanes (from `DEC_NR2_ROWS` rows up, see `dec_shape`) and
        // sub-block pairs (`decode_pair`). H200, `zinc matvec-cost` (each weight from memory):
        // Qwen3-8B's 12,288 × 4,096 13.61 µs against 14.49 at [32, 1, 128] without pairs (15.70
        // with pairs alone), 4,096 × 4,096 7.44 against 7.76, and 1,024 × 4,096 at one row with
        // pairs 4.93 against 6.11 (6.26 at two rows); tg128 278.2 tok/s against 271.8 / 263.6,
        // after 4,096 tokens 251.1 against 240.3 / 243.0.
        let mut decode_kquant = [[32, 2, 128, 2], [32, 1, 128, 1]];
        for (f, shape) in decode_kquant.iter_mut().enumerate() {
            let given = if f == 1 {
                opts.decode_q6k.or(opts.decode_kquant)
            } else {
                opts.decode_kquant
            };
            let pieces = checked(
                opts.decode_pieces,
                shape[3],
                |p| matches!(p, 1 | 2 | 4),
                |p| format!("decode pieces {p} (1, 2 or 4)"),
            )?;
            let passes = checked(
                opts.decode_passes,
                1,
                |p| matches!(p, 1 | 2 | 4),
                |p| format!("decode passes {p} (1, 2 or 4)"),
            )?;
            // The kernel's constant 4: the pieces, and the passes less one in bits 4–7.
            // PAIR applies at 2 pieces (on there unless asked off).
            let pair = opts.decode_pair.unwrap_or(pieces == 2);
            if pair && pieces != 2 {
                return Err(VulkanError::BadOption(format!(
                    "decode pair needs 2 pieces a lane, not {pieces}"
                )));
            }
            let pbx = with_passes(pieces | u32::from(pair) << 8, passes);
            shape[3] = pbx;
            if on_cpu || !int_dot {
                *shape = [0; 4];
            }
            if let Some((l, r, w)) = given {
                if l == 0 {
                    *shape = [0; 4];
                } else if l.is_power_of_two()
                    && l >= 8 / pieces
                    && (1..=8).contains(&r)
                    && w.is_power_of_two()
                    && (l.max(64)..=info.max_workgroup.min(1024)).contains(&w)
                {
                    if int_dot {
                        *shape = [l, r, w, pbx];
                    }
                } else {
                    return Err(VulkanError::BadOption(format!(
                        "K-quant decode shape {l}x{r}x{w} at pieces {pieces} (lanes a power \
                         of two ≥ 8 / pieces, 1–8 rows, a power-of-two workgroup of at least \
                         64 and the lanes, at most the device's {} and 1,024)",
                        info.max_workgroup
                    )));
                }
            }
        }
        let moe_rows = match opts.moe_rows {
            Some(r) if !(1..=8).contains(&r) => {
                return Err(VulkanError::BadOption(format!(
                    "MoE decode rows {r} (1 to 8 a group of lanes)"
                )))
            }
            r => r,
        };
        let moe_lanes = match opts.moe_lanes {
            Some((g, d)) => {
                let ok = |l: u32| l.is_power_of_two() && (8..=64).contains(&l);
                if !(ok(g) && ok(d)) {
                    return Err(VulkanError::BadOption(format!(
                        "MoE decode lanes {g}x{d} (gate and up x down, each a power of two \
                         from 8 to 64)"
                    )));
                }
                [g, d]
            }
            None => [MOE_GATE_UP_LANES, 0],
        };
        let moe_passes = match opts.moe_passes {
            Some((g, d)) => {
                let ok = |p: u32| matches!(p, 1 | 2 | 4);
                if !(ok(g) && ok(d)) {
                    return Err(VulkanError::BadOption(format!(
                        "MoE decode passes {g}x{d} (gate and up x down, each 1, 2 or 4)"
                    )));
                }
                Some([g, d])
            }
            None => None,
        };
        let moe_wg = match opts.moe_wg {
            Some(w) if !(matches!(w, 64 | 128 | 256) && w <= info.max_workgroup) => {
                return Err(VulkanError::BadOption(format!(
                    "MoE gate/up workgroup {w} (64, 128 or 256, within the device's {})",
                    info.max_workgroup
                )))
            }
            w => w,
        };
        let glu_rows_nr = match opts.glu_rows_nr {
            Some(n) if !matches!(n, 1 | 2 | 4) => {
                return Err(VulkanError::BadOption(format!(
                    "gate/up rows a group of lanes {n} (1, 2 or 4)"
                )))
            }
            Some(n) => [n, n],
            None => [4, 1],
        };
        let attn_ahead = checked(
            opts.attn_ahead,
            4,
            |u| matches!(u, 2 | 4 | 8),
            |u| format!("decode attention keys ahead {u} (2, 4 or 8)"),
        )?;
        if opts.attn_ablate > 31 {
            return Err(VulkanError::BadOption(format!(
                "decode attention ablation {} (bits 1, 2, 4, 8 and 16)",
                opts.attn_ablate
            )));
        }
        // Given: checked; `None`: chosen per dispatch (`attn_dec_plan`).
        let attn_wg = match opts.attn_wg {
            Some(w) if !(matches!(w, 128 | 256) && w <= info.max_workgroup) => {
                return Err(VulkanError::BadOption(format!(
                    "decode attention workgroup {w} (128 or 256, within the device's {})",
                    info.max_workgroup
                )))
            }
            w => w,
        };
        let attn_slices = checked(
            opts.attn_slices,
            ATTN_DEC_SLICES as u32,
            |n| (1..=MAX_SPLITS as u32).contains(&n),
            |n| format!("decode attention slices {n} (1–{MAX_SPLITS})"),
        )? as usize;
        let attn_heads = checked(
            opts.attn_heads,
            1,
            |h| matches!(h, 1 | 2 | 4 | 8),
            |h| format!("decode attention heads a workgroup {h} (1, 2, 4 or 8)"),
        )? as usize;
        let attn_rows = checked(
            opts.attn_rows,
            0,
            |h| matches!(h, 0 | 1 | 2 | 4 | 8),
            |h| {
                format!(
                    "decode attention heads a workgroup reading each key once {h} (0 for \
                     none, 1, 2, 4 or 8)"
                )
            },
        )? as usize;
        let attn_rows_keys = checked(
            opts.attn_rows_keys,
            2,
            |k| matches!(k, 2 | 4),
            |k| format!("decode attention keys an invocation reading each key once {k} (2 or 4)"),
        )?;
        let attn_direct = checked(
            opts.attn_direct,
            128,
            |n| n <= 1024,
            |n| format!("decode attention keys in one slice {n} (0–1,024)"),
        )? as usize;
        let decode_norm_wg = match opts.decode_norm_wg {
            Some(w) if !matches!(w, 64 | 128 | 256 | 512) || w > info.max_workgroup => {
                return Err(VulkanError::BadOption(format!(
                    "decode norm workgroup {w} (64, 128, 256 or 512, within the device's {})",
                    info.max_workgroup
                )))
            }
            Some(w) => w,
            // Within the device (Vulkan guarantees 128 invocations).
            None => DECODE_NORM_WG.min(pow2_workgroup(info.max_workgroup)),
        };
        if let Some(k) = opts
            .skip_kernels
            .iter()
            .find(|k| NEVER_SKIPPED.contains(&k.as_str()))
        {
            return Err(VulkanError::BadOption(format!(
                "leaving out {k}: its output indexes experts, later kernels could read out of bounds"
            )));
        }
        let (first, every) = checked(
            opts.submit_chunks,
            (FIRST_CHUNK, CHUNK),
            |(a, b)| (1..=4096).contains(&a) && (1..=4096).contains(&b),
            |(a, b)| format!("submit pieces {a}x{b} (1–4,096 commands each)"),
        )?;
        let growth = checked(
            opts.submit_growth,
            GROWTH,
            |g| (2..=16).contains(&g),
            |g| format!("submit pieces growing {g}× (2 to 16)"),
        )?;
        let adaptive_poll = checked(
            opts.adaptive_poll_us,
            ADAPTIVE_POLL_US,
            |us| us <= 1000,
            |us| format!("adaptive pieces polling every {us} µs (0 to 1,000)"),
        )?;
        let early_mask = checked(
            opts.early_mask,
            EARLY_ALL,
            |m| m <= EARLY_ALL,
            |m| format!("early-weights mask {m} (bits 1, 2, 4 and 8: at most 15)"),
        )?;
        let early_touch = checked(
            opts.early_touch,
            8,
            |t| t <= 8,
            |t| format!("early-weights touch loads {t} (0 to 8)"),
        )?;
        let router_wg = checked(
            opts.router_wg,
            ROUTER_WG.min(pow2_workgroup(info.max_workgroup)),
            |w| (w == 64 || w == 128) && w <= info.max_workgroup,
            |w| format!("router workgroup {w} (64 or 128, within the device's)"),
        )?;
        let matvec_tokens = checked(
            opts.matvec_tokens,
            8,
            |t| (1..=8).contains(&t),
            |t| format!("prompt f32 mat-vec tokens {t} (1 to 8)"),
        )?;
        if opts.router_stop > 7 {
            return Err(VulkanError::BadOption(format!(
                "router stop {} (0–7: whole, no ranking, no counter, scattered picks, ranked \
                 then fixed, plain loads, no loads, no loads or barrier)",
                opts.router_stop
            )));
        }
        if opts.pad_stages > MAX_PAD_STAGES {
            return Err(VulkanError::BadOption(format!(
                "{} padding stages (at most {MAX_PAD_STAGES})",
                opts.pad_stages
            )));
        }
        Ok(Tuning {
            threads_per_row,
            q_threads_per_row,
            p_threads_per_row,
            decode_matvec,
            decode_kquant,
            decode_rows_auto: opts.decode_kquant.is_none(),
            q6k_rows_auto: opts.decode_q6k.is_none(),
            int_dot,
            shuffle,
            cpu_attention,
            coopmat,
            cm_spec,
            cm_tm,
            moe_tm,
            moe_spec,
            moe_fused_down: opts.moe_fused_down.unwrap_or(true),
            fuse_norm: opts.fuse_norm.unwrap_or(false),
            fuse_glu: opts.fuse_glu.unwrap_or(true),
            glu_rows: opts.glu_rows.unwrap_or(true),
            glu_rows_nr,
            fuse_prep: opts.fuse_prep.unwrap_or(true),
            early_weights: if opts.early_weights.unwrap_or(false) && in_order_dispatch(info) {
                early_mask
            } else {
                0
            },
            early_touch,
            moe_rows,
            moe_lanes,
            moe_passes,
            moe_wg,
            router_routes: opts.router_routes.unwrap_or(true),
            router_norm: opts.router_norm.unwrap_or(true),
            router_stop: opts.router_stop,
            router_wg,
            matvec_tokens,
            prep_rows: opts.prep_rows.unwrap_or(true),
            act_quant_sg: opts.act_quant_sg.unwrap_or(true),
            mm_beside: opts.mm_beside.unwrap_or(true),
            glu_round: opts.glu_round.unwrap_or(true),
            norm_round: opts.norm_round.unwrap_or(true),
            route_general: opts.route_general,
            route_rank: opts.route_rank.unwrap_or(true),
            router_first: opts.router_first.unwrap_or(true),
            decode_two: opts.decode_two.unwrap_or(true),
            prompt_f16: opts.prompt_f16.unwrap_or(true),
            f16_budget,
            attn_merge: opts.attn_merge.unwrap_or(false),
            attn_one_pass: opts.attn_one_pass,
            attn_rows,
            attn_rows_keys,
            attn_wg,
            attn_ahead,
            attn_ablate: opts.attn_ablate,
            attn_rope_table: opts.attn_rope_table.unwrap_or(true),
            attn_x32: opts.attn_x32.unwrap_or(true),
            attn_slices,
            attn_heads,
            attn_direct,
            decode_norm_wg,
            chunks: [first, every, growth],
            spin_wait: opts.spin_wait.unwrap_or(!on_cpu),
            step_ahead: opts.step_ahead.unwrap_or(true),
            piece_fences: opts.piece_fences.unwrap_or(true),
            submit_adaptive: opts.submit_adaptive.unwrap_or(true),
            adaptive_poll: std::time::Duration::from_micros(adaptive_poll.into()),
            pad_stages: opts.pad_stages,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An H200-like device (what the defaults were measured on) or a CPU one (lavapipe).
    fn device(kind: crate::DeviceKind, vram_gib: u64) -> DeviceInfo {
        DeviceInfo {
            index: 0,
            name: "test".into(),
            kind,
            vendor_id: 0x10de,
            driver_name: String::new(),
            driver_info: String::new(),
            api_version: (1, 3, 0),
            subgroup_size: 32,
            subgroup_arithmetic: true,
            subgroup_shuffle: true,
            shader_fp16: true,
            shader_int8: true,
            storage_8bit: true,
            storage_16bit: true,
            integer_dot_product: true,
            cooperative_matrix: true,
            pipeline_stats: false,
            shader_clock: false,
            buffer_device_address: true,
            vram: vram_gib << 30,
            max_storage_buffer_range: u32::MAX as u64,
            max_allocation: 1 << 34,
            max_push_constants: 256,
            max_shared_memory: 48 << 10,
            max_workgroup: 1024,
            timestamp_period: 1.0,
        }
    }

    #[test]
    fn defaults_follow_the_device() {
        let gpu = Tuning::resolve(
            &VulkanOptions::default(),
            &device(crate::DeviceKind::Discrete, 140),
        )
        .unwrap();
        assert_eq!(gpu.decode_kquant, [[32, 2, 128, 2 | 256], [32, 1, 128, 1]]);
        assert_eq!(
            (gpu.attn_wg, gpu.attn_ahead, gpu.attn_slices),
            (None, 4, ATTN_DEC_SLICES)
        );
        assert_eq!((gpu.attn_heads, gpu.attn_direct), (1, 128));
        assert_eq!(gpu.decode_norm_wg, DECODE_NORM_WG);
        assert!(gpu.moe_fused_down && gpu.route_rank && !gpu.cpu_attention);
        assert_eq!(gpu.f16_budget, (140u64 << 30) / 2);
        assert_eq!(gpu.chunks, [FIRST_CHUNK, CHUNK, GROWTH]);
        assert!(gpu.submit_adaptive && gpu.piece_fences);
        assert_eq!(gpu.adaptive_poll.as_micros(), ADAPTIVE_POLL_US.into());
        let grown = Tuning::resolve(
            &VulkanOptions {
                submit_chunks: Some((16, 256)),
                submit_growth: Some(3),
                ..Default::default()
            },
            &device(crate::DeviceKind::Discrete, 141),
        )
        .expect("pieces growing 3×");
        assert_eq!(grown.chunks, [16, 256, 3]);
        assert!(gpu.spin_wait && gpu.pad_stages == 0);
        assert_eq!(gpu.router_wg, ROUTER_WG);
        assert_eq!(gpu.matvec_tokens, 8);
        assert_eq!((gpu.moe_lanes, gpu.moe_wg), ([MOE_GATE_UP_LANES, 0], None));
        assert_eq!((gpu.moe_passes, gpu.attn_one_pass), (None, None));
        assert_eq!((gpu.attn_rows, gpu.attn_rows_keys), (0, 2));
        let given = VulkanOptions {
            moe_passes: Some((2, 4)),
            attn_one_pass: Some(true),
            attn_rows: Some(4),
            attn_rows_keys: Some(4),
            ..Default::default()
        };
        let t = Tuning::resolve(&given, &device(crate::DeviceKind::Discrete, 140)).unwrap();
        assert_eq!((t.moe_passes, t.attn_one_pass), (Some([2, 4]), Some(true)));
        assert_eq!((t.attn_rows, t.attn_rows_keys), (4, 4));
        for (rows, keys) in [(Some(3), None), (None, Some(8))] {
            let given = VulkanOptions {
                attn_rows: rows,
                attn_rows_keys: keys,
                ..Default::default()
            };
            let e = Tuning::resolve(&given, &device(crate::DeviceKind::Discrete, 140));
            assert!(
                matches!(&e, Err(VulkanError::BadOption(m)) if m.contains("each key once")),
                "{rows:?} {keys:?}: {:?}",
                e.err()
            );
        }
        // The activation in the gate/up tail; MoE experts shaped as dense weights.
        assert!(gpu.fuse_glu && gpu.moe_rows.is_none());
        assert!(gpu.glu_rows && gpu.glu_rows_nr == [4, 1] && gpu.fuse_prep);
        assert!(gpu.decode_rows_auto && gpu.q6k_rows_auto);
        // Q6_K: an output head two rows a group, every other weight one.
        assert_eq!(gpu.q6k_shape(151_936), [32, 2, 128, 1]);
        assert_eq!(gpu.q6k_shape(DEC_HEAD_ROWS - 1), [32, 1, 128, 1]);
        let given = VulkanOptions {
            decode_q6k: Some((32, 1, 128)),
            ..Default::default()
        };
        let g = Tuning::resolve(&given, &device(crate::DeviceKind::Discrete, 80)).unwrap();
        assert_eq!(g.q6k_shape(151_936)[1], 1);
        // Half of an 80 GB card's memory for f16 prompt copies; a quarter just under 64 GiB
        // and of an integrated GPU's.
        assert_eq!(g.f16_budget, (80u64 << 30) / 2);
        assert!(g.attn_x32);
        for (kind, gib) in [
            (crate::DeviceKind::Discrete, 63),
            (crate::DeviceKind::Integrated, 80),
        ] {
            let t = Tuning::resolve(&VulkanOptions::default(), &device(kind, gib)).unwrap();
            assert_eq!(t.f16_budget, (gib << 30) / 4, "{kind:?} {gib} GiB");
        }
        let mid = Tuning::resolve(
            &VulkanOptions::default(),
            &device(crate::DeviceKind::Discrete, 48),
        )
        .unwrap();
        assert_eq!(mid.f16_budget, (48u64 << 30) / 4);
        let small = Tuning::resolve(
            &VulkanOptions::default(),
            &device(crate::DeviceKind::Discrete, 16),
        )
        .unwrap();
        assert_eq!(small.f16_budget, 0);
        // CPU devices (lavapipe): no matvec_dec, the CPU's attention arithmetic.
        let cpu = Tuning::resolve(
            &VulkanOptions::default(),
            &device(crate::DeviceKind::Cpu, 16),
        )
        .unwrap();
        assert_eq!(cpu.decode_kquant, [[0; 4]; 2]);
        assert!(cpu.cpu_attention);
        // Lavapipe's device is the host's cores: the host sleeps while it works.
        assert!(!cpu.spin_wait);
        assert_eq!(cpu.attn_rows, 0);
        // Given shapes apply to both K-quants unless Q6_K has its own; pieces to both.
        let opts = VulkanOptions {
            decode_kquant: Some((16, 3, 64)),
            decode_q6k: Some((64, 1, 256)),
            decode_pieces: Some(4),
            ..Default::default()
        };
        let t = Tuning::resolve(&opts, &device(crate::DeviceKind::Cpu, 16)).unwrap();
        assert_eq!(t.decode_kquant, [[16, 3, 64, 4], [64, 1, 256, 4]]);
        // The passes (less one) in bits 4-7 of both; PAIR (bit 8) at 2 pieces, asked for at 4
        // an error.
        let opts = VulkanOptions {
            decode_kquant: Some((32, 1, 128)),
            decode_pieces: Some(2),
            decode_passes: Some(4),
            decode_pair: Some(true),
            ..Default::default()
        };
        let t = Tuning::resolve(&opts, &device(crate::DeviceKind::Cpu, 16)).unwrap();
        assert_eq!(
            t.decode_kquant,
            [
                [32, 1, 128, 2 | 3 << 4 | 256],
                [32, 1, 128, 2 | 3 << 4 | 256]
            ]
        );
        assert!(!t.decode_rows_auto && t.q6k_rows_auto);
        let opts = VulkanOptions {
            decode_pieces: Some(4),
            decode_pair: Some(true),
            ..Default::default()
        };
        assert!(Tuning::resolve(&opts, &device(crate::DeviceKind::Discrete, 16)).is_err());
        let opts = VulkanOptions {
            decode_passes: Some(3),
            ..Default::default()
        };
        assert!(Tuning::resolve(&opts, &device(crate::DeviceKind::Discrete, 16)).is_err());
    }

    #[test]
    fn tuning_values_out_of_range_are_errors_that_name_them() {
        let gpu = device(crate::DeviceKind::Discrete, 140);
        let bad = [
            (
                VulkanOptions {
                    decode_pieces: Some(3),
                    ..Default::default()
                },
                "decode pieces 3",
            ),
            (
                VulkanOptions {
                    decode_kquant: Some((4, 1, 128)),
                    ..Default::default()
                },
                "4x1x128",
            ),
            (
                VulkanOptions {
                    decode_kquant: Some((32, 9, 128)),
                    ..Default::default()
                },
                "32x9x128",
            ),
            (
                VulkanOptions {
                    decode_q6k: Some((32, 1, 96)),
                    ..Default::default()
                },
                "32x1x96",
            ),
            (
                VulkanOptions {
                    moe_rows: Some(9),
                    ..Default::default()
                },
                "MoE decode rows 9",
            ),
            (
                VulkanOptions {
                    moe_rows: Some(0),
                    ..Default::default()
                },
                "MoE decode rows 0",
            ),
            (
                VulkanOptions {
                    moe_lanes: Some((16, 4)),
                    ..Default::default()
                },
                "MoE decode lanes 16x4",
            ),
            (
                VulkanOptions {
                    glu_rows_nr: Some(3),
                    ..Default::default()
                },
                "gate/up rows a group of lanes 3",
            ),
            (
                VulkanOptions {
                    moe_wg: Some(96),
                    ..Default::default()
                },
                "MoE gate/up workgroup 96",
            ),
            (
                VulkanOptions {
                    moe_passes: Some((2, 3)),
                    ..Default::default()
                },
                "MoE decode passes 2x3",
            ),
            (
                VulkanOptions {
                    moe_lanes: Some((24, 8)),
                    ..Default::default()
                },
                "MoE decode lanes 24x8",
            ),
            (
                VulkanOptions {
                    attn_wg: Some(512),
                    ..Default::default()
                },
                "workgroup 512",
            ),
            (
                VulkanOptions {
                    attn_ahead: Some(3),
                    ..Default::default()
                },
                "keys ahead 3",
            ),
            (
                VulkanOptions {
                    attn_heads: Some(3),
                    ..Default::default()
                },
                "heads a workgroup 3",
            ),
            (
                VulkanOptions {
                    attn_ablate: 32,
                    ..Default::default()
                },
                "attention ablation 32",
            ),
            (
                VulkanOptions {
                    attn_direct: Some(1025),
                    ..Default::default()
                },
                "keys in one slice 1025",
            ),
            (
                VulkanOptions {
                    decode_norm_wg: Some(32),
                    ..Default::default()
                },
                "decode norm workgroup 32",
            ),
            (
                VulkanOptions {
                    skip_kernels: vec!["attn_dec".into(), "moe_route".into()],
                    ..Default::default()
                },
                "leaving out moe_route",
            ),
            (
                VulkanOptions {
                    submit_chunks: Some((0, 64)),
                    ..Default::default()
                },
                "0x64",
            ),
            (
                VulkanOptions {
                    submit_growth: Some(1),
                    ..Default::default()
                },
                "growing 1×",
            ),
            (
                VulkanOptions {
                    submit_growth: Some(17),
                    ..Default::default()
                },
                "growing 17×",
            ),
            (
                VulkanOptions {
                    adaptive_poll_us: Some(1001),
                    ..Default::default()
                },
                "polling every 1001 µs",
            ),
            (
                VulkanOptions {
                    pad_stages: MAX_PAD_STAGES + 1,
                    ..Default::default()
                },
                "9 padding stages",
            ),
            (
                VulkanOptions {
                    threads_per_row: Some(3),
                    ..Default::default()
                },
                "threads per row 3",
            ),
            (
                VulkanOptions {
                    prompt_threads_per_row: Some(128),
                    ..Default::default()
                },
                "prompt threads per row 128",
            ),
            (
                VulkanOptions {
                    decode_matvec: Some((16, 3, 128)),
                    ..Default::default()
                },
                "16x3x128",
            ),
            (
                VulkanOptions {
                    coopmat_tile: Some((3, 64, 4)),
                    ..Default::default()
                },
                "tile 3x64x4",
            ),
            (
                VulkanOptions {
                    moe_tile: Some((2, 48, 4)),
                    ..Default::default()
                },
                "MoE cooperative-matrix tile 2x48x4",
            ),
            (
                VulkanOptions {
                    attn_slices: Some(0),
                    ..Default::default()
                },
                "slices 0",
            ),
            (
                VulkanOptions {
                    attn_slices: Some(129),
                    ..Default::default()
                },
                "slices 129",
            ),
            (
                VulkanOptions {
                    router_stop: 8,
                    ..Default::default()
                },
                "router stop 8",
            ),
            (
                VulkanOptions {
                    router_wg: Some(96),
                    ..Default::default()
                },
                "router workgroup 96",
            ),
            (
                VulkanOptions {
                    matvec_tokens: Some(0),
                    ..Default::default()
                },
                "mat-vec tokens 0",
            ),
            (
                VulkanOptions {
                    matvec_tokens: Some(9),
                    ..Default::default()
                },
                "mat-vec tokens 9",
            ),
            (
                VulkanOptions {
                    early_mask: Some(16),
                    ..Default::default()
                },
                "mask 16",
            ),
            (
                VulkanOptions {
                    early_touch: Some(9),
                    ..Default::default()
                },
                "touch loads 9",
            ),
        ];
        for (opts, names) in bad {
            match Tuning::resolve(&opts, &gpu) {
                Err(VulkanError::BadOption(m)) => {
                    assert!(m.contains(names), "{m:?} lacks {names:?}")
                }
                Err(e) => panic!("{names}: another error {e}"),
                Ok(_) => panic!("{names}: accepted"),
            }
        }
        // A device of 128-invocation workgroups (Vulkan's least) refuses larger ones, and its
        // defaults stay within it.
        let mut small = gpu.clone();
        small.max_workgroup = 128;
        let fit = Tuning::resolve(&VulkanOptions::default(), &small).unwrap();
        assert_eq!(fit.decode_norm_wg, 128);
        assert!(fit.decode_kquant.iter().all(|s| s[2] <= 128));
        for (opts, names) in [
            (
                VulkanOptions {
                    decode_kquant: Some((32, 1, 256)),
                    ..Default::default()
                },
                "32x1x256",
            ),
            (
                VulkanOptions {
                    attn_wg: Some(256),
                    ..Default::default()
                },
                "workgroup 256",
            ),
        ] {
            match Tuning::resolve(&opts, &small) {
                Err(VulkanError::BadOption(m)) => {
                    assert!(m.contains(names), "{m:?} lacks {names:?}")
                }
                other => panic!("{names}: {:?}", other.map(|_| ())),
            }
        }
        // 2 lanes a row is enough with 4 pieces a lane (a block's 8 pieces in 2 lanes).
        let ok = VulkanOptions {
            decode_kquant: Some((2, 1, 64)),
            decode_pieces: Some(4),
            ..Default::default()
        };
        assert_eq!(
            Tuning::resolve(&ok, &gpu).unwrap().decode_kquant[0],
            [2, 1, 64, 4]
        );
    }

    #[test]
    fn barrier_modes_are_named_once_and_exactly() {
        use super::super::recorder::BarrierAblation;
        let of = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            BarrierAblation::of(&names)
        };
        assert_eq!(of(&[]).unwrap(), BarrierAblation::Full);
        assert_eq!(of(&["attn_dec"]).unwrap(), BarrierAblation::Full);
        assert_eq!(of(&["barrier"]).unwrap(), BarrierAblation::None);
        assert_eq!(
            of(&["attn_dec", "barrier-exec"]).unwrap(),
            BarrierAblation::Exec
        );
        assert_eq!(of(&["barrier-read"]).unwrap(), BarrierAblation::Read);
        for bad in [&["barrier-bogus"][..], &["barrier", "barrier-read"]] {
            let e = of(bad).unwrap_err().to_string();
            assert!(e.contains("barrier-exec"), "{e}");
        }
    }
}
