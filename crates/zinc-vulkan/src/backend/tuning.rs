//! The Vulkan backend's options resolved against the device into the kernel shapes the backend
//! records with (`Tuning`): defaults per device kind, and an error naming any tuning value out
//! of range.

use super::recorder::{ADAPTIVE_POLL_US, CHUNK, FIRST_CHUNK, GROWTH};
use super::*;
use crate::DeviceInfo;

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
    /// See [`VulkanOptions::attn_cm`] (0: off; 1 or 2 only where the device has the matrices).
    pub(super) attn_cm: u32,
    /// See [`VulkanOptions::combine_ahead`].
    pub(super) combine_ahead: bool,
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
        let attn_cm = checked(
            opts.attn_cm,
            0,
            |f| f == 0 || (f <= 2 && plan.coopmat),
            |f| match f {
                1 | 2 => format!(
                    "decode attention on cooperative matrices {f} (this device has no \
                     16×16×16 f16 cooperative matrices in subgroups of 32)"
                ),
                _ => format!("decode attention on cooperative matrices {f} (0, 1 or 2)"),
            },
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
            attn_cm,
            combine_ahead: opts.combine_ahead.unwrap_or(false),
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
        // Decode attention on cooperative matrices: off unless asked; asked for on a device
        // without 16×16×16 f16 matrices in subgroups of 32, or as a form there is not, an
        // error that names it.
        assert_eq!(gpu.attn_cm, 0);
        assert!(!gpu.combine_ahead);
        let cm = |f| VulkanOptions {
            attn_cm: Some(f),
            ..Default::default()
        };
        for f in [0, 1, 2] {
            let t = Tuning::resolve(&cm(f), &device(crate::DeviceKind::Discrete, 140));
            assert_eq!(t.unwrap().attn_cm, f);
        }
        let e = Tuning::resolve(&cm(3), &device(crate::DeviceKind::Discrete, 140));
        assert!(
            matches!(&e, Err(VulkanError::BadOption(m)) if m.contains("(0, 1 or 2)")),
            "{:?}",
            e.err()
        );
        for (coop, sgs) in [(false, 32), (true, 64), (true, 8)] {
            let info = DeviceInfo {
                cooperative_matrix: coop,
                subgroup_size: sgs,
                ..device(crate::DeviceKind::Discrete, 140)
            };
            for f in [1, 2] {
                let e = Tuning::resolve(&cm(f), &info);
                assert!(
                    matches!(&e, Err(VulkanError::BadOption(m)) if m.contains("no 16×16×16")),
                    "{coop} {sgs} {f}: {:?}",
                    e.err()
                );
            }
            assert_eq!(Tuning::resolve(&cm(0), &info).unwrap().attn_cm, 0);
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
