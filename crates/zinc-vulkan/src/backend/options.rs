//! The Vulkan backend's options, chosen at the edge (the CLI, tests): which device, validation,
//! and every kernel-tuning value with what was measured for its default. `tuning.rs` resolves
//! them against the device.

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
    /// `attn_dec_*rows`). Kernel tuning. `None`: 2 (H100, session 43, an earlier form of the
    /// kernel at 4 heads, Qwen3-8B tg64 after 4,096 tokens: 235.86 / 238.19 tok/s at 2 keys
    /// against 200.01 / 197.28 at 4).
    pub attn_rows_keys: Option<u32>,
    /// Decode attention over split slices on cooperative matrices (`attn_dec_cm.comp`): a
    /// workgroup takes a slice for all of a KV head's query heads (up to 8), so each key and
    /// value is read from memory once, and makes the scores and the weighted values as
    /// 16×16×16 f16 matrix products (queries and weights in two f16 parts, as the prompt
    /// attention's). 1: each of its four subgroups walks its own blocks of 16 keys with its own
    /// running softmax, and they meet at the end; 2 (BLOCKS): the workgroup walks blocks of 64
    /// keys together, each subgroup holding a quarter of the output (fewer registers). Slices
    /// a multiple of 64 keys. Heads of 32, 64 or 128; needs 16×16×16 f16 cooperative
    /// matrices in subgroups of 32 (asking for it elsewhere is an error). Kernel tuning; 0 is
    /// off. `None`: off — written in session 45 without a GPU, not yet run on one
    /// (`scripts/device/h200_s46_a.sh` checks and measures both forms).
    pub attn_cm: Option<u32>,
    /// attn_combine.comp's AHEAD variant (`attn_combine_ahead`): each output's partials of 8
    /// slices loaded together, then summed in slice order (the same sums in the same order as
    /// the plain kernel's loop, which leaves the compiler one slice's loads at a time). Kernel
    /// tuning. `None`: off — written in session 45 without a GPU (the merge took 5.83 µs a
    /// layer by the H100's clock after 4,096 tokens, session 44; `scripts/device/h200_s46_a.sh`
    /// measures it).
    pub combine_ahead: Option<bool>,
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
