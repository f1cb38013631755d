//! The activations' roundings on the Vulkan backend: what a dot product with a weight's format
//! reads (the CPU backend's and llama.cpp's quantizations), the cache of the latest one so
//! that readers of the same row share it, the quantizations producers write beside their
//! output (norms, activations), early weights' signals, and the fused RMSNorm of
//! matvec_dec.comp's FUSE.

use super::*;

impl VulkanBackend {
    /// The activations a dot product with `ty` weights sees: rounded as the CPU backend and
    /// llama.cpp quantize them (Q8_0/Q8_1 for legacy formats, Q8_K for k-quants, f16/bf16 for
    /// those floats), so results follow the CPU oracle. `None`: use `x` as it is (f32).
    /// With `half`, the rounded values come as f16 pairs (the cooperative-matrix mat-mul's
    /// input; `x.len()` even).
    pub(super) fn dot_input(&self, ty: GgmlType, x: &VkTensor, half: bool) -> Option<u64> {
        self.dot_input_used(ty, x, half).map(|(a, _)| a)
    }

    /// `dot_input`, and whether an earlier mat-mul read the same rounding with nothing else
    /// recorded since (`RoundCache::used`).
    pub(super) fn dot_input_used(
        &self,
        ty: GgmlType,
        x: &VkTensor,
        half: bool,
    ) -> Option<(u64, bool)> {
        let (mode, block) = act_mode(ty)?;
        self.settle(x);
        // q, k and v (gate and up) round the same input: once, kept while it stays current.
        let mut cache = self.rcache.lock().unwrap_or_else(|e| e.into_inner());
        let ops = self.rec().ops;
        if let Some(c) = cache.as_mut() {
            let same = c.x == x.addr() && c.len == x.len() && c.mode == mode && c.half == half;
            if same && c.seq == ops {
                let used = std::mem::replace(&mut c.used, true);
                return Some((c.out.addr(), used));
            }
        }
        let out = self.new_tensor(x.rows, x.cols);
        let n = x.len() / block;
        let mut push = Push::new();
        push.a(x.addr())
            .a(out.addr())
            .w(n as u32)
            .w(mode)
            .w(half as u32);
        // A workgroup per block (modes 1, 2), or per 128 elements (3, 4).
        let groups = if block == 1 { n.div_ceil(128) } else { n };
        let sg = self.tune.act_quant_sg && self.tune.shuffle;
        let name = if sg { "act_quant_sg" } else { "act_quant" };
        self.run(name, 64, fold(groups), push);
        if x.rows > 4 {
            self.last_round_mode.store(mode, Relaxed);
        }
        let addr = out.addr();
        *cache = Some(RoundCache {
            x: x.addr(),
            len: x.len(),
            mode,
            half,
            seq: self.rec().ops,
            out,
            used: true,
            keep: Vec::new(),
        });
        Some((addr, false))
    }

    /// A prompt's gated activation with its rounding for the down-projection in one dispatch
    /// (`VulkanOptions::glu_round`: `act_quant_glu`), that rounding made current as
    /// `dot_input_used` would make it, for weights of `ty`'s rounding (the gate's: the down's
    /// is the same in the usual mixes; where not, the down rounds again, the same numbers).
    /// None where the option is off, the rows are few (decode steps quantize for `matvecq`),
    /// nothing would read the rounding, or it is not one of blocks.
    pub(super) fn gated_rounded(
        &self,
        g: &VkTensor,
        u: &VkTensor,
        act: GatedAct,
        ty: GgmlType,
    ) -> Option<VkTensor> {
        let (mode, block) = act_mode(ty)?;
        // (With integer dots and no cooperative matrices a prompt's down-projection quantizes
        // for `matvecq` instead: the rounding would go unread.)
        let read = self.tune.coopmat || !self.tune.int_dot;
        if !self.tune.glu_round || !read || g.rows <= 4 || block == 1 {
            return None;
        }
        // (Blocks within rows, as the down's columns are.)
        if !g.cols.is_multiple_of(block) {
            return None;
        }
        self.settle(g);
        self.settle(u);
        // As `project` will read it: f16 pairs for the cooperative mat-mul.
        let half = self.tune.coopmat && g.cols.is_multiple_of(32);
        let out = self.new_tensor(g.rows, g.cols);
        let r = self.new_tensor(g.rows, g.cols);
        let mut push = Push::new();
        push.a(g.addr())
            .a(r.addr())
            .a(u.addr())
            .a(out.addr())
            .a(self.gelu_table.address)
            .w((g.len() / block) as u32)
            .w(mode)
            .w(half as u32)
            .w((act == GatedAct::GeGlu) as u32);
        let sg = self.tune.act_quant_sg && self.tune.shuffle;
        let name = if sg {
            "act_quant_glu_sg"
        } else {
            "act_quant_glu"
        };
        self.run(name, 64, fold(g.len() / block), push);
        self.rounding_made(&out, mode, half, r);
        Some(out)
    }

    /// A prompt's pre-norm of `x` into `out` with, in the same dispatch, the rounding its
    /// projections read (`VulkanOptions::norm_round`: `rms_norm_round`), made current as
    /// `dot_input_used` would make it in the mode of the last prompt rounding (where the
    /// projections' weights take another, they round again: the same numbers). False (nothing
    /// recorded) where the option is off, no prompt rounding was made yet, nothing would read
    /// one, or the row does not fit the kernel.
    pub(super) fn norm_rounded(
        &self,
        x: &VkTensor,
        w: &VkWeight,
        eps: f32,
        out: &VkTensor,
    ) -> bool {
        let mode = self.last_round_mode.load(Relaxed);
        let read = self.tune.coopmat || !self.tune.int_dot;
        let bs = match mode {
            1 => 32,
            2 => 256,
            _ => return false,
        };
        let group = x.cols;
        if !self.tune.norm_round || !read || !self.tune.shuffle || x.rows <= 4 {
            return false;
        }
        let wg = self.norm_wg(group, x.rows);
        // The group in shared memory (s_val), and rms.glsl's two sums an invocation.
        let shared = 4 * group + 8 * wg as usize;
        if !group.is_multiple_of(bs) || shared > self.ctx.info.max_shared_memory as usize {
            return false;
        }
        let half = self.tune.coopmat && group.is_multiple_of(32);
        let r = self.new_tensor(x.rows, x.cols);
        let mut push = Push::new();
        push.a(x.addr())
            .a(w.buf.address)
            .a(out.addr())
            .a(r.addr())
            .w(x.cols as u32)
            .w(group as u32)
            .f(eps)
            .w(x.rows as u32)
            .w(mode)
            .w(half as u32);
        self.run_spec("rms_norm_round", [wg, 1, group as u32], fold(x.rows), push);
        self.rounding_made(out, mode, half, r);
        true
    }

    /// `r`, the rounding of `x` in `mode` (f16 pairs where `half`) its fused producer just
    /// recorded, made current for `dot_input_used` (no mat-mul has read it yet).
    pub(super) fn rounding_made(&self, x: &VkTensor, mode: u32, half: bool, r: VkTensor) {
        let mut cache = self.rcache.lock().unwrap_or_else(|e| e.into_inner());
        *cache = Some(RoundCache {
            x: x.addr(),
            len: x.len(),
            mode,
            half,
            seq: self.rec().ops,
            out: r,
            used: false,
            keep: Vec::new(),
        });
    }

    /// A pool buffer read by a prompt mat-mul (a scratch f16 weight) held
    /// while the current rounding is: with `mm_beside` the next mat-mul of that rounding runs
    /// beside its reader, so handing the buffer out again before a barrier (the next
    /// rounding's) would let that mat-mul overwrite it while it is read. Without the option (or
    /// a rounding) it goes back to the pool now: later commands wait behind a barrier.
    pub(super) fn keep_with_rounding(&self, t: VkTensor) {
        if !self.tune.mm_beside {
            return;
        }
        let mut cache = self.rcache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.as_mut() {
            c.keep.push(t);
        }
    }

    /// After commands recorded since `seq` that wrote nothing but fresh outputs: a rounded
    /// input current at `seq` is current still.
    pub(super) fn round_still_valid(&self, seq: u64) {
        let ops = self.rec().ops;
        if let Some(c) = self
            .rcache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .filter(|c| c.seq == seq)
        {
            c.seq = ops;
        }
    }

    /// `x` quantized to 8-bit integers for `ty`'s integer dot product (quant_act.comp): the
    /// addresses of the packed bytes and of the per-32-element chunk floats, which stay valid
    /// until the next call. `None` where `ty` has no such path.
    /// The third value says whether the quantization was already read by an earlier mat-vec
    /// with nothing but such mat-vecs recorded since (see `QuantCache::used`); the fourth, the
    /// scale its reader must apply (a deferred norm's, only where `scaled_ok`: else the norm
    /// is settled and its output quantized afresh).
    pub(super) fn quant_input(
        &self,
        ty: GgmlType,
        x: &VkTensor,
        scaled_ok: bool,
    ) -> Option<QuantIn> {
        // Integer activations exist for the 8-bit modes only (not f16/bf16 rounding).
        let mode = act_mode(ty).map(|(m, _)| m).filter(|&m| m <= 2)?;
        self.last_mode.store(mode, Relaxed);
        let n = x.len();
        {
            let mut cache = self.qcache.lock().unwrap_or_else(|e| e.into_inner());
            let ops = self.rec().ops;
            if let Some(c) = cache.as_mut() {
                if c.holds(x, mode, ops) && (scaled_ok || c.scale.is_none()) {
                    let used = std::mem::replace(&mut c.used, true);
                    return Some((c.q, c.s, used, c.scale.clone()));
                }
                // An attention's chunks of 32 that this reader does not take (`attn_x32_at`).
                if c.holds(x, 1, ops) && c.x32 && c.s == self.attn_x32_at.load(Relaxed) {
                    self.attn_x32_refused.store(true, Relaxed);
                }
            }
        }
        self.settle(x);
        let mut cache = self.qcache.lock().unwrap_or_else(|e| e.into_inner());
        // Sized in f32 slots: n bytes of quants, 4 floats per 32 elements.
        let q = self.new_tensor(1, n.div_ceil(4));
        let s = self.new_tensor(1, n / 8);
        let mut push = Push::new();
        push.a(x.addr()).a(q.addr()).a(s.addr()).w(n as u32).w(mode);
        self.run("quant_act", 64, fold(n.div_ceil(256)), push);
        let addrs = (q.addr(), s.addr(), false, None);
        *cache = Some(QuantCache {
            x: x.key(),
            len: n,
            mode,
            seq: self.rec().ops,
            used: true,
            q: q.addr(),
            s: s.addr(),
            _keep: Some((q, Some(s))),
            scale: None,
            x32: false,
        });
        Some(addrs)
    }

    /// `quant_input` for a reader on matvec_dec.comp (`dec`) of a K-quant weight, which also takes
    /// an input quantized in Q8_0-style chunks (mode 1, as `glu_rows` leaves it) as it is, each
    /// chunk's own scale applied (X32): the quantization, and whether it is such.
    pub(super) fn quant_input_dec(
        &self,
        ty: GgmlType,
        x: &VkTensor,
        scaled_ok: bool,
        dec: bool,
    ) -> Option<(QuantIn, bool)> {
        if dec && matches!(act_mode(ty), Some((2, _))) {
            let mut cache = self.qcache.lock().unwrap_or_else(|e| e.into_inner());
            let ops = self.rec().ops;
            if let Some(c) = cache.as_mut() {
                if c.holds(x, 1, ops) && c.x32 && c.scale.is_none() {
                    let used = std::mem::replace(&mut c.used, true);
                    return Some(((c.q, c.s, used, None), true));
                }
            }
        }
        self.quant_input(ty, x, scaled_ok).map(|q| (q, false))
    }

    /// Applies a deferred norm's scale to `x` in place (rscale.comp), so that it holds the
    /// normed rows; nothing where `x` is not deferred. A quantization cached from its `z`
    /// keeps its scale and stays right for the mat-vecs that apply it.
    pub(super) fn settle(&self, x: &VkTensor) {
        let Some(n) = x.deferred.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        x.is_deferred.store(false, Ordering::Release);
        let mut push = Push::new();
        push.a(x.key())
            .a(n.parts())
            .w(x.cols as u32)
            .w(x.rows as u32)
            .f(n.eps);
        self.run("rscale", 256, fold(x.rows * x.cols.div_ceil(1024)), push);
    }

    /// Whether the last command quantized `x` (so the quantization is current).
    pub(super) fn quant_current(&self, x: &VkTensor) -> bool {
        let ops = self.rec().ops;
        let cache = self.qcache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .as_ref()
            .is_some_and(|c| c.x == x.key() && c.len == x.len() && c.seq == ops)
    }

    /// After a dispatch that wrote nothing but a fresh output: the cached quantized input is
    /// still current.
    pub(super) fn quant_still_valid(&self) {
        if let Some(c) = self
            .qcache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            c.seq = self.rec().ops;
        }
    }

    /// Where the next kernel's output `n` values (rows of `cols`) will likely feed an
    /// integer-dot mat-vec: the activation mode to quantize them in as they are produced (the
    /// mode the last such mat-vec asked for) and fresh buffers for the quantization. Prompts on
    /// cooperative matrices take rounded f16 activations instead, so they get none.
    pub(super) fn quant_target(
        &self,
        rows: usize,
        cols: usize,
    ) -> Option<(u32, VkTensor, VkTensor)> {
        self.quant_target_for(rows, cols, false)
    }

    /// `quant_target`, also for more than 4 rows where `int_next` says an integer-dot kernel
    /// reads them (MoE slots).
    pub(super) fn quant_target_for(
        &self,
        rows: usize,
        cols: usize,
        int_next: bool,
    ) -> Option<(u32, VkTensor, VkTensor)> {
        self.quant_target_in(rows, cols, int_next, self.last_mode.load(Relaxed))
    }

    /// `quant_target_for` in `mode` (1 or 2) whatever the last mat-vec asked for.
    pub(super) fn quant_target_in(
        &self,
        rows: usize,
        cols: usize,
        int_next: bool,
        mode: u32,
    ) -> Option<(u32, VkTensor, VkTensor)> {
        self.quant_block(rows, cols, int_next, mode)?;
        let n = rows * cols;
        Some((mode, self.new_tensor(1, n / 4), self.new_tensor(1, n / 8)))
    }

    /// The block `quant_target_in` would quantize in (32 for mode 1, 256 for mode 2), or
    /// `None` where it makes no target; nothing allocated.
    pub(super) fn quant_block(
        &self,
        rows: usize,
        cols: usize,
        int_next: bool,
        mode: u32,
    ) -> Option<usize> {
        let block = mode_block(mode)?;
        let fits = self.tune.int_dot
            && !(self.tune.coopmat && rows > 4 && !int_next)
            && cols.is_multiple_of(block);
        fits.then_some(block)
    }

    /// Early weights: a sync.glsl slot and a fresh epoch (never 0) for a producer about to be
    /// recorded, where early weights are on and no ablation leaves kernels out (a producer left
    /// out would keep its consumers polling).
    pub(super) fn sync_begin(&self) -> Option<(u64, u32)> {
        if self.tune.early_weights == 0 || self.ablating.load(Relaxed) {
            return None;
        }
        let mut e = self.sync_epoch.fetch_add(1, Relaxed).wrapping_add(1);
        if e == 0 {
            e = self.sync_epoch.fetch_add(1, Relaxed).wrapping_add(1);
        }
        let slot = self.sync.address + 4 * SYNC_SLOT_WORDS * (e as u64 % SYNC_SLOTS);
        Some((slot, e))
    }

    /// Early weights: the producer just recorded signals `sync` once its quants `q` are stored.
    pub(super) fn sync_recorded(&self, sync: Option<(u64, u32)>, q: u64, attention: bool) {
        if self.tune.early_weights == 0 {
            return;
        }
        let ops = self.rec().ops;
        *self.signal.lock().unwrap_or_else(|e| e.into_inner()) = sync.map(|(slot, epoch)| Signal {
            q,
            slot,
            epoch,
            ops,
            attention,
        });
    }

    /// Early weights: the signal a mat-vec reading the quants `q` may wait for beside their
    /// producer — where nothing but the producer and its other consumers was recorded since.
    /// `consumer`: its `early_mask` bit where its producer is a norm (the out-projection's,
    /// where it is the attention, is EARLY_O).
    pub(super) fn sync_for(&self, q: u64, consumer: u32) -> Option<Signal> {
        if self.tune.early_weights == 0 {
            return None;
        }
        let s = (*self.signal.lock().unwrap_or_else(|e| e.into_inner()))?;
        let bit = if s.attention {
            tuning::EARLY_O
        } else {
            consumer
        };
        (s.q == q && s.ops == self.rec().ops && self.tune.early_weights & bit != 0).then_some(s)
    }

    /// Early weights: a consumer of the signal was recorded (the next may follow it).
    pub(super) fn sync_consumed(&self) {
        let ops = self.rec().ops;
        if let Some(s) = self
            .signal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            s.ops = ops;
        }
    }

    /// Records that `x` was just quantized (by the last command) into `q` and `s`, in `mode`.
    pub(super) fn quant_primed(&self, x: &VkTensor, mode: u32, q: VkTensor, s: VkTensor) {
        let (qa, sa) = (q.addr(), s.addr());
        self.quant_primed_at(x, mode, (qa, sa), (q, Some(s)), false);
    }

    /// `quant_primed` for quants and chunk floats at `at`, in the buffers `keep`; `x32`: mode-1
    /// chunks that K-quant readers on matvec_dec.comp may take as they are (`QuantCache::x32`).
    pub(super) fn quant_primed_at(
        &self,
        x: &VkTensor,
        mode: u32,
        at: (u64, u64),
        keep: (VkTensor, Option<VkTensor>),
        x32: bool,
    ) {
        let seq = self.rec().ops;
        *self.qcache.lock().unwrap_or_else(|e| e.into_inner()) = Some(QuantCache {
            x: x.key(),
            len: x.len(),
            mode,
            seq,
            used: false,
            q: at.0,
            s: at.1,
            _keep: Some(keep),
            scale: None,
            x32,
        });
    }

    /// Records that the last command wrote the deferred norm `h` with its quantization (Q8_K,
    /// in its side buffer).
    pub(super) fn quant_primed_norm(&self, h: &VkTensor) {
        let seq = self.rec().ops;
        let n = h.norm_scale().expect("a deferred norm");
        *self.qcache.lock().unwrap_or_else(|e| e.into_inner()) = Some(QuantCache {
            x: h.key(),
            len: h.len(),
            mode: 2,
            seq,
            used: false,
            q: n.quants(),
            s: n.chunks(),
            _keep: None,
            scale: Some(n),
            x32: false,
        });
    }

    /// The outputs of a fused RMSNorm by `norm` of `ntok` rows of `rows`, for a matvec_dec.comp
    /// dispatch whose workgroups are `wg` invocations holding `per_wg` rows each; `None` where
    /// FUSE does not apply (nothing allocated that outlives the call).
    pub(super) fn fuse_begin(
        &self,
        ntok: usize,
        rows: usize,
        norm: &VkWeight,
        eps: f32,
        (wg, per_wg): (u32, u32),
    ) -> Option<FuseOut> {
        let fits = self.tune.fuse_norm
            && self.tune.int_dot
            && ntok <= 4
            && rows.is_multiple_of(256)
            && norm.ty == GgmlType::F32
            && norm.dims.iter().product::<u64>() == rows as u64
            && wg.is_multiple_of(64)
            && per_wg > 0
            && 256 % per_wg == 0
            && rows / per_wg as usize <= 65535 // one grid row of workgroups a token (no padding)
            && ntok * rows / 256 <= FUSE_COUNTERS;
        if !fits {
            return None;
        }
        let n = ntok * rows;
        let h = self.new_tensor(ntok, rows);
        // Quants (n / 4 slots), chunk floats (n / 8), partial sums (2 a block).
        let side = self.new_tensor(1, n / 4 + n / 8 + 2 * n / 256);
        let norm = DecNorm {
            nz: h.key(),
            side: side.key(),
            g: norm.buf.address,
            cnt: self.fuse_count.address,
            eps,
            fuse: true,
            ..DecNorm::default()
        };
        *h.deferred.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Arc::new(NormScale { side, n, eps }));
        h.is_deferred.store(true, Ordering::Release);
        Some(FuseOut {
            h,
            norm,
            sync: None,
        })
    }

    /// matvec.comp's ROUTE counters.
    pub(super) fn route_count(&self) -> u64 {
        self.fuse_count.address + 4 * FUSE_COUNTERS as u64
    }

    /// The fused norm of `fuse_begin` once its dispatch is recorded (the last command): its
    /// deferred output, whose quantization the next mat-vecs read.
    pub(super) fn fuse_end(&self, f: FuseOut) -> VkTensor {
        self.quant_primed_norm(&f.h);
        let quants = f.h.norm_scale().map(|n| n.quants());
        self.sync_recorded(
            f.sync.filter(|_| quants.is_some()),
            quants.unwrap_or(0),
            false,
        );
        f.h
    }
}
