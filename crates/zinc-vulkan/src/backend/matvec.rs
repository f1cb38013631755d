//! Mat-vecs and mat-muls on the Vulkan backend: `project`'s choice of kernel (cooperative
//! mat-mul, integer-dot mat-vec, float mat-vec), the decode mat-vec's shapes and dispatch
//! (matvec_dec.comp), the gate and up projections with their activation in one dispatch
//! (GROWS, GLU), and the gated activation's own kernel.

use super::*;

impl VulkanBackend {
    /// `y = W · x` for rows of a (possibly expert-offset) weight.
    pub(super) fn project(&self, w: &VkWeight, x: &VkTensor) -> VkTensor {
        let (rows, cols) = (w.rows(), w.cols());
        let out = self.new_tensor(x.rows, rows);
        let float_weight = is_float(w.ty);
        // Cooperative matrices take quantized weights and F16 ones, rows a multiple of 32.
        let cooperative = self.tune.coopmat
            && x.rows > 4
            && (!float_weight || w.ty == GgmlType::F16)
            && cols.is_multiple_of(32);
        if !cooperative && self.tune.int_dot && self.matvecq(w, x, out.addr(), false, None) {
            return out;
        }
        // An F32 mat-vec (an MoE router) of a deferred norm applies its scale itself.
        let scale = x
            .norm_scale()
            .filter(|_| w.ty == GgmlType::F32 && x.rows <= 4);
        if scale.is_none() {
            self.settle(x);
        }
        // The f32 kernels take the activations rounded as the CPU's dot product sees them.
        // The cooperative-matrix mat-mul reads them as f16 (`matmul_cm.comp`'s XH).
        // (Every weight that goes there has a rounding: F32 weights do not.)
        let (xa, used) = self
            .dot_input_used(w.ty, x, cooperative)
            .unwrap_or((x.key(), false));
        // What follows writes only fresh buffers (the output, a scratch weight).
        let seq = self.rec().ops;
        let beside = used && self.tune.mm_beside;
        let y = self.project_rounded(w, x, xa, out, cooperative, scale.as_deref(), beside);
        self.round_still_valid(seq);
        y
    }

    /// `project` once the activations are rounded (at `xa`, as f16 pairs for the cooperative
    /// mat-mul; `x` gives the shape). `scale`: `xa` is a deferred norm's `z` (F32 weights, a
    /// few rows: matvec.comp applies it). `beside`: the cooperative
    /// mat-mul goes beside the commands since the last barrier (`VulkanOptions::mm_beside`:
    /// they wrote nothing it reads).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn project_rounded(
        &self,
        w: &VkWeight,
        x: &VkTensor,
        xa: u64,
        out: VkTensor,
        cooperative: bool,
        scale: Option<&NormScale>,
        beside: bool,
    ) -> VkTensor {
        let (rows, cols) = (w.rows(), w.cols());
        let float_weight = is_float(w.ty);
        let mut push = Push::new();
        push.a(w.buf.address)
            .a(xa)
            .a(out.addr())
            .w(cols as u32)
            .w(rows as u32)
            .w(w.row_bytes as u32)
            .w(x.rows as u32);
        if cooperative {
            // Optionally the weight as f16 rows first: a copy kept for later prompts while the
            // budget lasts, else a pool buffer (back to the pool once the mat-mul that reads it
            // is recorded: later commands wait for it — but not a mat-mul beside it, so with
            // `mm_beside` it is held with the rounding, `keep_with_rounding`).
            let mut wty = w.ty;
            let (mut waddr, mut row_bytes) = (w.buf.address, w.row_bytes);
            let mut scratch = None;
            // Rows of f16 too large for one allocation dequantize inside the mat-mul instead.
            let f16_bytes = (rows * cols * 2) as u64;
            let fits = f16_bytes <= self.ctx.max_buffer_bytes();
            let ops0 = self.rec().ops;
            if self.tune.prompt_f16 && !float_weight && fits {
                let addr = match self.f16_copy(w) {
                    Some(a) => a,
                    None => {
                        let h = self.new_tensor(rows, cols / 2);
                        self.dequant_f16(w, h.addr());
                        let a = h.addr();
                        scratch = Some(h);
                        a
                    }
                };
                wty = GgmlType::F16;
                (waddr, row_bytes) = (addr, 2 * cols as u64);
            }
            let push = |y: u64| {
                Push::new()
                    .addr(waddr)
                    .addr(xa)
                    .addr(y)
                    .u32(cols as u32)
                    .u32(rows as u32)
                    .u32(row_bytes as u32)
                    .u32(x.rows as u32)
            };
            // A workgroup: 16·TM·SGN tokens × 64·SGM rows. (A smaller tile where this one makes
            // fewer than 256 workgroups, e.g. 4,096 rows of a 512-token prompt, measured slower
            // on the H200: Qwen3-8B pp512 7,830 / 7,814 tok/s against 6,416 / 6,429 for 1x64x4,
            // 6,535 for 1x64x2, 6,770 for 1x32x4.)
            let [wg, sgm, mut bk] = self.tune.cm_spec;
            let tm = self.tune.cm_tm;
            let tiles = rows.div_ceil(64 * sgm as usize);
            let bn = cm_tile_tokens(wg, sgm, tm);
            let g = grid(x.rows.div_ceil(bn), tiles);
            // BK must divide the row.
            if !cols.is_multiple_of(bk as usize) {
                bk = 32;
            }
            // XH: the activations arrive as f16.
            let spec = [wg, sgm, bk, 1, tm, 0];
            // Not beside where a command was recorded for it here (the weight dequantized to
            // f16 rows: it reads what that wrote).
            let beside = beside && self.rec().ops == ops0;
            let push = push(out.addr());
            let name = variant("matmul_cm", wty);
            self.run_ordered(name, spec, g, push, Some(out.addr()), beside);
            if let Some(h) = scratch {
                self.keep_with_rounding(h);
            }
            return out;
        }
        // Few rows (an MoE router) would leave most of the device idle in matmul.comp's
        // 64 × 32 tiles (H200, Qwen3-30B-A3B's 128-row F32 router, 512 tokens: 616 µs): the
        // mat-vec then takes each token in its own workgroups.
        let tiles = rows.div_ceil(64) * x.rows.div_ceil(32);
        if x.rows <= 4 || (tiles < 256 && x.rows <= 65535) {
            self.matvec_f(w, x, xa, out.addr(), scale, None, None);
        } else {
            assert!(scale.is_none(), "a deferred norm reaches matvec.comp only");
            let mut g = fold(rows.div_ceil(64));
            g[1] = x.rows.div_ceil(32) as u32;
            self.run(variant("matmul", w.ty), 256, g, push);
        }
        out
    }

    /// matvec.comp: `out = W · x` for a few token rows, each in its own workgroups, the
    /// activations at `xa` (`x` gives the shape); `scale`: they are a deferred norm's `z`
    /// (has_rs); `route`: an MoE router that also routes (ROUTE: the picks' ids and weights, k,
    /// renorm; the caller checked `route_fused`'s limits); `norm_in` (with `route`, the caller
    /// checked `router_norm_in`): `xa` is that norm's input, which the router normalizes
    /// itself, recorded beside the norm (SN).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn matvec_f(
        &self,
        w: &VkWeight,
        x: &VkTensor,
        xa: u64,
        out: u64,
        scale: Option<&NormScale>,
        route: Option<(&VkTensor, &VkTensor, usize, bool)>,
        norm_in: Option<NormOrigin>,
    ) {
        let (rows, cols) = (w.rows(), w.cols());
        let tpr = self.tune.threads_per_row;
        // A router that routes in workgroups of its own size (`VulkanOptions::router_wg`).
        let wg = if route.is_some() {
            self.tune.router_wg
        } else {
            64
        };
        let mut g = fold(rows.div_ceil((wg / tpr) as usize));
        g[1] = x.rows as u32;
        // F32 rows as 16-byte vectors where they and the activations' rows are aligned.
        let v4 = w.ty == GgmlType::F32
            && tpr > 1
            && cols.is_multiple_of(4)
            && w.row_bytes.is_multiple_of(16)
            && w.buf.address.is_multiple_of(16)
            && xa.is_multiple_of(16);
        let mut push = Push::new();
        push.a(w.buf.address)
            .a(xa)
            .a(out)
            .w(cols as u32)
            .w(rows as u32)
            .w(w.row_bytes as u32)
            .w(x.rows as u32);
        let push = match (scale, norm_in) {
            (Some(n), _) => push.addr(n.parts()).f32(n.eps).u32(1),
            (None, Some(n)) => push.addr(n.w).f32(n.eps).u32(0),
            (None, None) => push.addr(0).f32(0.0).u32(0),
        };
        let name = variant("matvec", w.ty);
        match route {
            // A prompt's f32 rows (an MoE router) as vectors: `matvec_tokens` tokens a workgroup
            // column, each weight vector loaded once for all of them, in workgroups of
            // MATVEC_TOKEN_ROWS rows (fewer where the device's workgroups are smaller) at up to 16
            // lanes a row.
            None if v4 && scale.is_none() && x.rows > 4 && self.tune.matvec_tokens > 1 => {
                let tpr = tpr.min(16);
                let per_wg =
                    MATVEC_TOKEN_ROWS.min(pow2_workgroup(self.ctx.info.max_workgroup) / tpr);
                let wg = tpr * per_wg;
                let mut g = fold(rows.div_ceil(per_wg as usize));
                let nt = self.tune.matvec_tokens;
                g[1] = x.rows.div_ceil(nt as usize) as u32;
                let spec = [wg, tpr, nt, 1, 0, self.tune.shuffle as u32];
                self.run_labeled(name, "matvec_tokens_F32", spec, g, push, None, false);
            }
            None => {
                let spec = [64, tpr, 1, v4 as u32, 0, self.tune.shuffle as u32];
                self.run_ordered(name, spec, g, push, None, false);
            }
            Some((ids, wts, k, renorm)) => {
                let push = push
                    .addr(ids.addr())
                    .addr(wts.addr())
                    .addr(self.route_count())
                    .u32(k as u32)
                    .u32(renorm as u32);
                // ROUTE's timing (bits 13-15) and testing (bit 16) variants, either form.
                let variant_bits =
                    self.tune.router_stop << 13 | (self.tune.route_general as u32) << 16;
                let Some(n) = norm_in else {
                    let bits = 1 | variant_bits;
                    let spec = [wg, tpr, 1, v4 as u32, bits, self.tune.shuffle as u32];
                    self.run_labeled(name, "router_routed", spec, g, push, None, false);
                    return;
                };
                // ROUTE's bit 1, SN, and the norm's workgroup as log2 in bits 8-12.
                let route_bits = 1 | 2 | n.wg.trailing_zeros() << 8 | variant_bits;
                let spec = [wg, tpr, 1, 1, route_bits, 1];
                if self.ablate(name, "router_routed", spec, g, &push) {
                    return;
                }
                let pipe = self.ctx.pipeline(name, spec).unwrap_or_else(|e| fatal(e));
                // Before the norm where it was held (`router_first`), else beside it.
                self.rec()
                    .dispatch_before_held("router_routed", pipe, &push, g)
                    .unwrap_or_else(|e| fatal(e));
            }
        }
    }

    /// Records `w` decoded into f16 rows at `out` (dequant_f16.comp).
    pub(super) fn dequant_f16(&self, w: &VkWeight, out: u64) {
        let (rows, cols) = (w.all_rows(), w.cols());
        let mut p = Push::new();
        p.a(w.buf.address)
            .a(out)
            .w(cols as u32)
            .w(rows as u32)
            .w(w.row_bytes as u32);
        let groups = fold((rows * cols / 16).div_ceil(256));
        self.run(variant("dequant_f16", w.ty), 256, groups, p);
    }

    /// The address of `w`'s kept f16 rows, decoding them now on first use, while the budget
    /// (`VulkanOptions::prompt_weight_cache_mb`) lasts; `None` past it.
    pub(super) fn f16_copy(&self, w: &VkWeight) -> Option<u64> {
        let mut map = self.f16_rows.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = map.get(&w.id) {
            return Some(b.address);
        }
        let bytes = (w.all_rows() * w.cols() * 2) as u64;
        let left = self.f16_budget.load(Relaxed);
        // Within the budget, and leaving a quarter of the device's memory to what this backend
        // has yet to allocate (KV caches, activations).
        let headroom = self.ctx.info.vram / 4;
        let taken = self.ctx.allocated_bytes();
        if bytes > left || taken + bytes + headroom > self.ctx.info.vram {
            return None;
        }
        // Out of device memory is no error here: the per-call scratch path remains.
        let buf = self.ctx.buffer(bytes, Memory::Device).ok()?;
        self.f16_budget.store(left - bytes, Relaxed);
        self.dequant_f16(w, buf.address);
        let a = buf.address;
        map.insert(w.id, buf);
        Some(a)
    }

    /// The RMSNorm workgroup for `rows` rows of groups of `group` values (`norm_wg`).
    pub(super) fn norm_wg(&self, group: usize, rows: usize) -> u32 {
        if rows <= 4 {
            self.tune.decode_norm_wg
        } else {
            norm_wg(group, self.ctx.info.max_workgroup)
        }
    }

    /// Whether `matvecq` of `w` on `x` runs matvec_dec.comp (a decode step of a K-quant).
    pub(super) fn dec_kernel(&self, w: &VkWeight, x: &VkTensor) -> bool {
        self.dec_kernel_for(w, x.rows)
    }

    /// `dec_kernel` for `tokens` tokens (of an MoE step, however many slots they make).
    pub(super) fn dec_kernel_for(&self, w: &VkWeight, tokens: usize) -> bool {
        tokens <= 4
            && matches!(w.ty, GgmlType::Q4_K | GgmlType::Q6_K)
            && w.cols().is_multiple_of(256)
            && w.row_bytes.is_multiple_of(16)
            && self.dec_shape(w)[0] > 0
    }

    /// `dec_shape` of an MoE expert tensor: its gate or up projection's, or (`down`) its
    /// down-projection's (`VulkanOptions::moe_rows`, `moe_lanes`, `moe_wg`).
    pub(super) fn dec_shape_moe(&self, w: &VkWeight, down: bool) -> [u32; 4] {
        let mut s = self.dec_shape(w);
        if let Some(nr) = self.tune.moe_rows {
            s[1] = nr;
        }
        // (Lanes are at least 8, a block's at most.)
        let lanes = self.tune.moe_lanes[down as usize];
        if s[0] > 0 && lanes > 0 {
            s[0] = lanes;
        }
        if let Some(p) = self.tune.moe_passes.filter(|_| s[0] > 0) {
            s[3] = with_passes(s[3], p[down as usize]);
        }
        if let Some(wg) = self.tune.moe_wg.filter(|_| s[0] > 0 && !down) {
            s[2] = wg;
        }
        s
    }

    /// matvec_dec.comp's [LPR, NR, WG, PB] for `w` (zeros: not used).
    pub(super) fn dec_shape(&self, w: &VkWeight) -> [u32; 4] {
        match w.ty {
            GgmlType::Q4_K => {
                let mut s = self.tune.decode_kquant[0];
                // Fewer rows than that: one row a group (twice the workgroups).
                if self.tune.decode_rows_auto && w.rows() < DEC_NR2_ROWS {
                    s[1] = 1;
                }
                s
            }
            GgmlType::Q6_K => self.tune.q6k_shape(w.rows()),
            _ => [0; 4],
        }
    }
    /// `y = W · x` (or `y += W · x` with `accumulate`) on the integer-dot kernel; false (nothing
    /// recorded) where `w`'s format has no such path. `fuse`: matvec_dec.comp's FUSE block (the
    /// caller's `fuse_begin` said it applies).
    pub(super) fn matvecq(
        &self,
        w: &VkWeight,
        x: &VkTensor,
        y: u64,
        accumulate: bool,
        fuse: Option<&FuseOut>,
    ) -> bool {
        let (rows, cols) = (w.rows(), w.cols());
        let kquant = self.dec_kernel(w, x);
        // A dispatch that fuses the next norm cannot also apply its input's (FUSE and RS share
        // push constants): such an input is settled and quantized afresh.
        let scaled_ok = kquant && fuse.is_none();
        let Some(((q, s, used, scale), x32)) = self.quant_input_dec(w.ty, x, scaled_ok, kquant)
        else {
            return false;
        };
        // A second reader of the same quantization writing a fresh output needs no barrier
        // after the first: the commands since the last one only read what it reads and wrote
        // their own fresh outputs. An accumulator may be anything, so it waits.
        let concurrent = used && !accumulate;
        let seq = self.rec().ops;
        let dims = [
            cols as u32,
            rows as u32,
            w.row_bytes as u32,
            x.rows as u32,
            accumulate as u32,
        ];
        // Decode steps on K-quants: matvec_dec.comp (a block's pieces across neighbouring
        // lanes); other decode steps: a token per invocation, NR rows per group of lanes;
        // prompts: NT tokens share each weight read.
        let (shader, nt, tpr, nr, wg): (&'static str, u32, u32, u32, u32) = if kquant {
            let [lpr, nr, wg, _] = self.dec_shape(w);
            (variant("matvec_dec", w.ty), 1, lpr, nr, wg)
        } else if x.rows <= 4 {
            let [tpr, nr, wg] = self.tune.decode_matvec;
            (variant("matvecq", w.ty), 1, tpr, nr, wg)
        } else {
            (
                variant("matvecq", w.ty),
                8,
                self.tune.p_threads_per_row,
                1,
                128,
            )
        };
        let wg = wg.max(tpr);
        let g = grid(
            x.rows.div_ceil(nt as usize),
            rows.div_ceil((wg / tpr * nr) as usize),
        );
        // matvecq.comp: [WG, TPR, NT, NR], its push constants the addresses then `dims`;
        // matvec_dec.comp: [WG, LPR, NR, MOE, PB] (`dec_push`).
        let addrs = [w.buf.address, q, s, y];
        let mut wait = None;
        let (spec, push) = if kquant {
            let norm = match fuse {
                Some(f) => DecNorm { x32, ..f.push() },
                None => DecNorm {
                    x32,
                    ..DecNorm::reading(scale.as_deref())
                },
            };
            // Early weights: one token's input (plain, or a deferred norm's), its producer the
            // last command; and a fused norm's readers told when it is stored.
            wait = (!norm.glu && !norm.grows && !norm.x32 && x.rows == 1 && cols <= WAIT_COLS)
                .then(|| {
                    let head = rows >= DEC_HEAD_ROWS;
                    self.sync_for(
                        q,
                        if head {
                            tuning::EARLY_HEAD
                        } else {
                            tuning::EARLY_QKV
                        },
                    )
                })
                .flatten();
            let (slot, epoch) = fuse.and_then(|f| f.sync).unwrap_or((0, 0));
            let moe = DecMoe {
                scale: slot,
                row0: epoch,
                ..wait.map_or_else(DecMoe::default, |sg| DecMoe {
                    ids: sg.slot,
                    k: sg.epoch,
                    expert16: self.tune.early_touch,
                    ..DecMoe::default()
                })
            };
            let push = dec_push(addrs, dims, &moe, &norm);
            let bits = norm.spec() | if wait.is_some() { DEC_WAIT } else { 0 };
            ([wg, tpr, nr, 0, self.dec_shape(w)[3], bits], push)
        } else {
            let mut p = Push::new();
            for &a in &addrs {
                p.a(a);
            }
            for &d in &dims {
                p.w(d);
            }
            ([wg, tpr, nt, nr, 0, 0], p)
        };
        let writes = (!accumulate).then_some(y);
        let label = self.shape_label(shader, rows, cols);
        // TWO: a plain decode mat-vec of one token is held back, and the next of the same
        // kernel, shape and input (reading it beside this one, no barrier between) joins it.
        let two = kquant
            && self.tune.decode_two
            && wait.is_none()
            && fuse.is_none()
            && !accumulate
            && x.rows == 1
            && rows < DEC_HEAD_ROWS
            && spec[5] & !DEC_X32 == 0
            && !self.ablating.load(Relaxed);
        if wait.is_some() {
            self.run_beside(shader, label, spec, g, push);
            self.sync_consumed();
        } else if two {
            let groups = g[1] as usize + (g[2] as usize - 1) * 65535;
            let mut first = self.two.lock().unwrap_or_else(|e| e.into_inner());
            let joined = match first.take() {
                Some(f)
                    if concurrent
                        && y != f.addrs[3]
                        && f.ops == self.rec().ops
                        && self.rec().holds()
                        && f.shader == shader
                        && f.spec[5] == spec[5]
                        && f.addrs[1..3] == addrs[1..3]
                        && f.dims[0] == dims[0]
                        && f.dims[2] == dims[2] =>
                {
                    // One dispatch: the first's workgroups, then this one's at the first's shape.
                    let rpw = (f.spec[0] / f.spec[1] * f.spec[2]) as usize;
                    let moe = DecMoe {
                        ids: w.buf.address,
                        wts: y,
                        row0: rows as u32,
                        ..DecMoe::default()
                    };
                    let push = dec_push(f.addrs, f.dims, &moe, &f.norm);
                    let mut spec = f.spec;
                    spec[5] |= DEC_TWO;
                    let all = grid(1, f.groups + rows.div_ceil(rpw));
                    let label = self.shape_label(shader, f.rows + rows, cols);
                    let pipe = self.ctx.pipeline(shader, spec).unwrap_or_else(|e| fatal(e));
                    self.rec().replace_held(label, pipe, &push, all, y)
                }
                _ => false,
            };
            if !joined {
                let pipe = self.ctx.pipeline(shader, spec).unwrap_or_else(|e| fatal(e));
                self.rec()
                    .hold(label, pipe, &push, g, writes, concurrent)
                    .unwrap_or_else(|e| fatal(e));
                let norm = DecNorm {
                    x32: spec[5] & DEC_X32 != 0,
                    ..DecNorm::default()
                };
                *first = Some(TwoFirst {
                    shader,
                    spec,
                    addrs,
                    dims,
                    norm,
                    groups,
                    rows,
                    ops: self.rec().ops,
                });
            }
        } else {
            self.run_labeled(shader, label, spec, g, push, writes, concurrent);
        }
        // The kernel wrote only y: a fresh output keeps the quantized input current; an
        // accumulator might be that input's buffer, so then it is dropped.
        if !accumulate && self.rec().ops == seq + 1 {
            self.quant_still_valid();
        }
        true
    }

    /// Decode steps (`VulkanOptions::glu_rows`): `act(gate·x) ⊙ (up·x)` in one dispatch of
    /// matvec_dec.comp's GROWS form, each workgroup 32 rows of both, their activation and its
    /// quantization as one Q8_0-style chunk (no counter, no tail); the down-projection on
    /// matvec_dec.comp reads the chunks' own scales (X32; another reader quantizes the activation
    /// afresh). `None` (nothing recorded) where it does not apply: the gate and up differing in
    /// format or shape, a workgroup of (32 / `glu_rows_nr`) × the lanes or its shared memory
    /// the device cannot take, or a deferred norm's input beside the up's expert scales (both
    /// would use one push constant). The arguments as `glu_fused`'s (after its own checks).
    pub(super) fn glu_rows(
        &self,
        pair: [(&VkWeight, usize); 2],
        n_ff: usize,
        x: &VkTensor,
        act: GatedAct,
        moe: Option<&GluSlots>,
        (lpr, pb, label): (u32, u32, &'static str),
    ) -> Option<VkTensor> {
        let [(gw, g0), (uw, u0)] = pair;
        let ntok = moe.map_or(x.rows, |m| m.nslots);
        let expert_bytes = gw.rows() as u64 * gw.row_bytes;
        // NR rows of each a group, 32 / NR groups: the workgroup's 32 rows are one chunk.
        let nr = self.tune.glu_rows_nr[moe.is_some() as usize];
        let wg = 32 / nr * lpr;
        let up_scale = moe.and_then(|m| m.scales[1]);
        // Shared memory: quant8.glsl's four words an invocation, the lanes' sums, the rows.
        let shared = 20 * wg as usize + 2048;
        // A deferred norm's input (RS) puts the norm's parts where the up's expert scales go.
        let fits = !(x.norm_scale().is_some() && up_scale.is_some())
            && g0 == 0
            && wg.is_multiple_of(64)
            && wg <= self.ctx.info.max_workgroup
            && shared <= self.ctx.info.max_shared_memory as usize
            && n_ff / 32 <= 65535;
        if !fits {
            return None;
        }
        let (q, s, used, scale) = self.quant_input(gw.ty, x, true)?;
        // A cached quantization may carry a scale though `x` is settled (nothing was recorded
        // then): with up scales, the tail.
        if scale.is_some() && up_scale.is_some() {
            return None;
        }
        let n = ntok * n_ff;
        let out = self.new_tensor(ntok, n_ff);
        let side = self.new_tensor(1, n / 4 + n / 8); // quants (n bytes), chunk floats
        let mut slots = glu_dec_moe(moe, 0, out.addr(), expert_bytes, 0);
        // Early weights: one token's input, its producer the last command.
        let wait = (moe.is_none() && x.rows == 1 && gw.cols() <= WAIT_COLS)
            .then(|| self.sync_for(q, tuning::EARLY_GLU))
            .flatten();
        if let Some(sg) = wait {
            (slots.ids, slots.k) = (sg.slot, sg.epoch);
            slots.expert16 = self.tune.early_touch;
        }
        let rs = DecNorm::reading(scale.as_deref());
        let norm = DecNorm {
            nz: uw.buf.address + u0 as u64 * uw.row_bytes,
            side: side.addr(),
            g: self.gelu_table.address,
            cnt: if rs.rs { rs.nz } else { up_scale.unwrap_or(0) },
            eps: rs.eps,
            rs: rs.rs,
            gelu: act == GatedAct::GeGlu,
            grows: true,
            up_scaled: up_scale.is_some(),
            mode: 1,
            ..DecNorm::default()
        };
        let dims = [
            gw.cols() as u32,
            n_ff as u32,
            gw.row_bytes as u32,
            ntok as u32,
            0,
        ];
        let push = dec_push([gw.buf.address, q, s, 0], dims, &slots, &norm);
        let name = variant("matvec_dec", gw.ty);
        let bits = norm.spec() | if wait.is_some() { DEC_WAIT } else { 0 };
        let spec = [wg, lpr, nr, moe.is_some() as u32, pb, bits];
        // (It also writes `side`, which it declares not: the quantization cache is replaced
        // below, and the down-projection reading it records a barrier first.)
        let g = grid(ntok, n_ff / 32);
        if wait.is_some() {
            self.run_beside(name, label, spec, g, push);
            self.sync_consumed();
        } else {
            self.run_labeled(name, label, spec, g, push, Some(out.addr()), used);
        }
        let sa = side.addr() + n as u64;
        self.quant_primed_at(&out, 1, (side.addr(), sa), (side, None), true);
        Some(out)
    }

    /// Decode steps: `act(gate·x) ⊙ (up·x)` by the gate and up mat-vecs with the activation and
    /// its quantization for the down-projection in their tail (matvec_dec.comp's GLU: the last
    /// workgroup of each 256-row block of both does glu_quant.comp's work, so the same bits and
    /// a stage fewer); `None` (nothing recorded) where it does not apply. `pair`: the two
    /// weights with each one's first row (an MoE tensor of gate rows then up rows is both),
    /// `n_ff` rows each; `moe`: the slots (the MOE 1 form).
    pub(super) fn glu_fused(
        &self,
        pair: [(&VkWeight, usize); 2],
        n_ff: usize,
        x: &VkTensor,
        act: GatedAct,
        moe: Option<GluSlots>,
    ) -> Option<VkTensor> {
        let [(gw, _), (uw, _)] = pair;
        let ntok = moe.as_ref().map_or(x.rows, |m| m.nslots);
        let expert_bytes = gw.rows() as u64 * gw.row_bytes;
        if !self.tune.int_dot || !self.dec_kernel_for(gw, x.rows) {
            return None;
        }
        let [lpr, nr, wg, pb] = match moe {
            Some(_) => self.dec_shape_moe(gw, false),
            None => self.dec_shape(gw),
        };
        let pb = if moe.is_some() { pb & !DEC_PAIR } else { pb };
        // Either form: gate and up alike, whole 256-row blocks, experts on 16-byte bounds, and
        // no timing ablation (a kernel left out or doubled would miscount).
        let alike = !self.ablating.load(Relaxed)
            && lpr > 0
            && gw.ty == uw.ty
            && (gw.cols(), gw.row_bytes, gw.rows()) == (uw.cols(), uw.row_bytes, uw.rows())
            && (moe.is_none() || expert_bytes.is_multiple_of(16))
            && n_ff.is_multiple_of(256);
        if !alike {
            return None;
        }
        let name = variant("matvec_dec", gw.ty);
        let label = match moe {
            Some(_) => self.shape_label("moe_matvec_dec", n_ff, gw.cols()),
            None => self.shape_label(name, n_ff, gw.cols()),
        };
        if self.tune.glu_rows {
            let shape = (lpr, pb, label);
            if let Some(a) = self.glu_rows(pair, n_ff, x, act, moe.as_ref(), shape) {
                return Some(a);
            }
        }
        let wg = wg.max(lpr);
        let per_wg = (wg / lpr * nr) as usize;
        let fits = self.tune.fuse_glu
            && wg.is_multiple_of(64)
            && 256 % per_wg == 0
            && n_ff / per_wg <= 65535 // one grid row of workgroups a token (no padding)
            && ntok * n_ff / 256 <= FUSE_COUNTERS;
        if !fits {
            return None;
        }
        // A deferred norm's input: its scale applied to the rows before they are stored (RS).
        let (q, s, used, scale) = self.quant_input(gw.ty, x, true)?;
        let mode = self.last_mode.load(Relaxed);
        let n = ntok * n_ff;
        let gu = self.new_tensor(2 * ntok, n_ff); // the gate rows, then the up rows
        let out = self.new_tensor(ntok, n_ff);
        let side = self.new_tensor(1, n / 4 + n / 8); // quants (n bytes), chunk floats
        let norm = DecNorm {
            side: side.addr(),
            g: self.gelu_table.address,
            cnt: self.fuse_count.address,
            glu: true,
            gelu: act == GatedAct::GeGlu,
            mode,
            ..DecNorm::reading(scale.as_deref())
        };
        let g = grid(ntok, n_ff / per_wg);
        for (i, (w, row0)) in pair.into_iter().enumerate() {
            let y = gu.addr() + (4 * n * i) as u64;
            let slots = glu_dec_moe(moe.as_ref(), i, out.addr(), expert_bytes, row0);
            let dims = [
                w.cols() as u32,
                n_ff as u32,
                w.row_bytes as u32,
                ntok as u32,
                0,
            ];
            let norm = DecNorm { up: i == 1, ..norm };
            let push = dec_push([w.buf.address, q, s, y], dims, &slots, &norm);
            let spec = [wg, lpr, nr, moe.is_some() as u32, pb, norm.spec()];
            // The up projection beside the gate's: both read the same input, each its own output.
            // (Both also write `out`, `side` and the counters, which they declare not: safe
            // because the quantization cache is replaced below, so nothing else joins their
            // barrier interval, and the down-projection reading `out` records a barrier first.)
            self.run_labeled(name, label, spec, g, push, Some(y), used || i == 1);
        }
        let sa = side.addr() + n as u64;
        self.quant_primed_at(&out, mode, (side.addr(), sa), (side, None), false);
        Some(out)
    }

    /// The gated activation; `int_next`: an integer-dot mat-vec reads it next whatever its
    /// rows (MoE slots), so it is quantized for it as it is produced.
    pub(super) fn gated_for(
        &self,
        gate: &VkTensor,
        up: &VkTensor,
        act: GatedAct,
        int_next: bool,
    ) -> VkTensor {
        let out = self.new_tensor(gate.rows, gate.cols);
        // The input of the down-projection: quantized in the same dispatch.
        if let Some((mode, q, s)) = self.quant_target_for(gate.rows, gate.cols, int_next) {
            let mut push = Push::new();
            push.a(gate.addr())
                .a(up.addr())
                .a(out.addr())
                .a(self.gelu_table.address)
                .a(q.addr())
                .a(s.addr())
                .w(gate.len() as u32)
                .w((act == GatedAct::GeGlu) as u32)
                .w(mode);
            self.run("glu_quant", 64, fold(gate.len().div_ceil(256)), push);
            self.quant_primed(&out, mode, q, s);
            return out;
        }
        let op = match act {
            GatedAct::SwiGlu => 4,
            GatedAct::GeGlu => 5,
        };
        self.elementwise(
            gate.addr(),
            up.addr(),
            out.addr(),
            gate.len(),
            gate.cols,
            op,
            0.0,
        );
        out
    }
}
