//! Mixture-of-experts FFNs on the Vulkan backend: routing, experts slot by slot (decode) or
//! grouped by expert on cooperative matrices (prompts), and their weighted sum.

use super::*;

/// `moe_matmul_cm.comp`'s tile (SGM, BK, SGN) with 2 accumulator tiles a subgroup (where the
/// default 2x64x2 with 4 does not fit): 128 slots × 128 rows, as the dense mat-mul's (a
/// 512-token prompt of 128 experts, top 8, averages 32 slots an expert, but smaller tiles
/// measured slower).
pub(super) const MOE_CM_TILE: (u32, u32, u32) = (2, 64, 4);
/// moe_sort.comp groups up to this many experts (and route.glsl routes).
const MOE_SORT_EXPERTS: usize = 1024;

impl VulkanBackend {
    /// A prompt's slots grouped by expert (moe_sort.comp) for `moe_project_grouped`: the order
    /// and the tile table, of `max_tiles` entries.
    fn moe_groups(&self, ids: u64, nslots: usize, n_expert: usize) -> (VkTensor, VkTensor, usize) {
        let [wg, sgm, _] = self.tune.moe_spec;
        let bn = cm_tile_tokens(wg, sgm, self.tune.moe_tm); // slots a tile
        let max_tiles = nslots.div_ceil(bn) + n_expert;
        let order = self.new_tensor(nslots, 1);
        let tiles = self.new_tensor(max_tiles, 3);
        let mut push = Push::new();
        push.a(ids)
            .a(order.addr())
            .a(tiles.addr())
            .w(nslots as u32)
            .w(n_expert as u32)
            .w(bn as u32)
            .w(max_tiles as u32);
        self.run("moe_sort", 256, [1, 1, 1], push);
        (order, tiles, max_tiles)
    }

    /// `moe_project` on cooperative matrices: each expert's slots together
    /// (moe_matmul_cm.comp over `moe_groups`' table), so an expert's rows are read once per tile
    /// of its slots (16·TM·SGN, 128 by default) instead of once per slot.
    #[allow(clippy::too_many_arguments)]
    fn moe_project_grouped(
        &self,
        w: &VkWeight,
        row_offset: usize,
        nrows: usize,
        x: &VkTensor,
        groups: &(VkTensor, VkTensor, usize),
        scale: Option<u64>,
        nslots: usize,
        k: usize,
        x_per_slot: bool,
    ) -> VkTensor {
        let cols = w.cols();
        let out = self.new_tensor(nslots, nrows);
        // The activations rounded as the CPU's dot product sees them, as f16 pairs.
        let (xa, used) = self
            .dot_input_used(w.ty, x, true)
            .unwrap_or((x.addr(), false));
        let seq = self.rec().ops;
        // The experts' kept f16 rows where there are some, else dequantized inside the mat-mul.
        let (waddr, wty, row_bytes) = match self.experts_f16(w) {
            Some(a) => (a, GgmlType::F16, 2 * cols as u64),
            None => (w.buf.address, w.ty, w.row_bytes),
        };
        let expert_bytes = w.rows() as u64 * row_bytes;
        let (order, tiles, max_tiles) = groups;
        let mut push = Push::new();
        push.a(waddr)
            .a(xa)
            .a(out.addr())
            .a(order.addr())
            .a(tiles.addr())
            .a(scale.unwrap_or(0))
            .w(cols as u32)
            .w(nrows as u32)
            .w(row_bytes as u32)
            .w(nslots as u32)
            .w(expert_bytes as u32)
            .w(k as u32)
            .w(x_per_slot as u32)
            .w(scale.is_some() as u32)
            .w(row_offset as u32);
        let [wg, sgm, mut bk] = self.tune.moe_spec;
        let row_tiles = nrows.div_ceil(64 * sgm as usize);
        let g = grid(*max_tiles, row_tiles);
        if !cols.is_multiple_of(bk as usize) {
            bk = 32;
        }
        // XH: the activations arrive as f16.
        let spec = [wg, sgm, bk, 1, self.tune.moe_tm, 0];
        // Beside an earlier reader of the same rounding (the up beside the gate), unless the
        // experts' f16 rows were made here (`VulkanOptions::mm_beside`).
        let beside = used && self.tune.mm_beside && self.rec().ops == seq;
        let name = variant("moe_matmul_cm", wty);
        self.run_ordered(name, spec, g, push, Some(out.addr()), beside);
        self.round_still_valid(seq);
        out
    }

    /// The kept f16 rows of a quantized expert tensor for `moe_project_grouped`
    /// (`f16_copy`, within its budget; `prompt_f16`); `None`: dequantize inside the mat-mul.
    /// Decoding into a scratch buffer for each call instead was slower than that (H200,
    /// Qwen3-30B-A3B prompt 512: 5,323 tok/s against 5,683; with kept copies 6,412).
    fn experts_f16(&self, w: &VkWeight) -> Option<u64> {
        let bytes = (w.all_rows() * w.cols() * 2) as u64;
        if !self.tune.prompt_f16 || is_float(w.ty) || bytes > self.ctx.max_buffer_bytes() {
            return None;
        }
        self.f16_copy(w)
    }

    /// Expert projections for every (token, slot): `y[s] = W[ids[s]] · x[s or s / k]`.
    #[allow(clippy::too_many_arguments)]
    fn moe_project(
        &self,
        w: &VkWeight,
        row_offset: usize,
        nrows: usize,
        x: &VkTensor,
        ids: u64,
        scale: Option<u64>,
        nslots: usize,
        k: usize,
        x_per_slot: bool,
    ) -> VkTensor {
        let cols = w.cols();
        let expert_rows = w.rows();
        let expert_bytes = expert_rows as u64 * w.row_bytes;
        let out = self.new_tensor(nslots, nrows);
        // The scalars both kernels take after their addresses.
        let shape = |p: Push| {
            p.u32(cols as u32)
                .u32(nrows as u32)
                .u32(w.row_bytes as u32)
                .u32(expert_bytes as u32)
                .u32(nslots as u32)
                .u32(k as u32)
                .u32(x_per_slot as u32)
                .u32(scale.is_some() as u32)
                .u32(row_offset as u32)
        };
        // Integer dot products where the format has them (moe_matvecq.comp); gate and up share
        // one quantized input and run without a barrier between them, as dense mat-vecs do.
        if self.tune.int_dot {
            // Decode steps of K-quant experts: matvec_dec.comp's coalesced loads (its MOE
            // form); else moe_matvecq.comp.
            let tokens = if x_per_slot {
                nslots / k.max(1)
            } else {
                x.rows
            };
            let dec = self.dec_kernel_for(w, tokens) && expert_bytes.is_multiple_of(16);
            if let Some((q, s, used, norm)) = self.quant_input(w.ty, x, dec) {
                let seq = self.rec().ops;
                if dec {
                    let [lpr, nr, wg, pb] = self.dec_shape_moe(w, x_per_slot);
                    let pb = pb & !DEC_PAIR;
                    let wg = wg.max(lpr);
                    let g = grid(nslots, nrows.div_ceil((wg / lpr * nr) as usize));
                    let moe = DecMoe {
                        ids,
                        scale: scale.unwrap_or(0),
                        expert16: (expert_bytes / 16) as u32,
                        k: k as u32,
                        x_per_slot,
                        has_scale: scale.is_some(),
                        row0: row_offset as u32,
                        wts: 0,
                    };
                    let addrs = [w.buf.address, q, s, out.addr()];
                    let dims = [
                        cols as u32,
                        nrows as u32,
                        w.row_bytes as u32,
                        nslots as u32,
                        0,
                    ];
                    let norm = DecNorm::reading(norm.as_deref());
                    let push = dec_push(addrs, dims, &moe, &norm);
                    let name = variant("matvec_dec", w.ty);
                    let label = self.shape_label("moe_matvec_dec", nrows, cols);
                    let spec = [wg, lpr, nr, 1, pb, norm.spec()];
                    self.run_labeled(name, label, spec, g, push, Some(out.addr()), used);
                } else {
                    let tpr = self.tune.q_threads_per_row;
                    let wg = 128.max(tpr);
                    let g = grid(nslots, nrows.div_ceil((wg / tpr) as usize));
                    let spec = [wg, tpr, 0, 0, 0, 0];
                    let name = variant("moe_matvecq", w.ty);
                    let mut push = Push::new();
                    push.a(w.buf.address).a(q).a(s);
                    let push = shape(push.addr(out.addr()).addr(ids).addr(scale.unwrap_or(0)));
                    self.run_ordered(name, spec, g, push, Some(out.addr()), used);
                }
                if self.rec().ops == seq + 1 {
                    self.quant_still_valid();
                }
                return out;
            }
        }
        self.settle(x);
        let xa = self.dot_input(w.ty, x, false).unwrap_or(x.addr());
        let mut push = Push::new();
        push.a(w.buf.address).a(xa);
        let push = shape(push.addr(out.addr()).addr(ids).addr(scale.unwrap_or(0)));
        let mut g = fold(nrows);
        g[1] = nslots as u32;
        self.run(variant("moe_matvec", w.ty), 64, g, push);
        out
    }

    /// The mixture-of-experts FFN of `x` into `out`, or added to it (`accumulate`: in the same
    /// dispatch as the experts' weighted sum, the same numbers as `moe_ffn` then `add`).
    /// `next`: the RMSNorm to fuse into the down-projection where it can (`matmul_add_norm`);
    /// the answer is that norm's output where it was fused.
    pub(super) fn moe(
        &self,
        x: &VkTensor,
        w: &MoeWeights<'_, VkWeight>,
        out: &VkTensor,
        accumulate: bool,
        next: Option<(&VkWeight, f32)>,
    ) -> Option<VkTensor> {
        // Prompts (and devices without integer dot products) read x as f32 throughout.
        if x.rows > 4 || !self.tune.int_dot {
            self.settle(x);
        }
        let primed = self.quant_current(x);
        let n_expert = w.router.rows();
        let k = w.k.min(n_expert);
        let nslots = x.rows * k;
        let ids = self.new_tensor(nslots, 1);
        let wts = self.new_tensor(nslots, 1);
        let experts: Vec<&VkWeight> = match &w.gate_up {
            GateUp::Separate { gate, up } => vec![gate, up, w.down],
            GateUp::Fused(gu) => vec![gu, w.down],
        };
        if !self.route_fused(w.router, x, &ids, &wts, k, w.renorm) {
            let logits = self.project(w.router, x);
            let mut push = Push::new();
            push.a(logits.addr())
                .a(ids.addr())
                .a(wts.addr())
                .w(n_expert as u32)
                .w(k as u32)
                .w(w.renorm as u32)
                .w(x.rows as u32);
            let spec = [
                self.tune.shuffle as u32,
                self.tune.route_rank as u32,
                self.tune.route_general as u32,
            ];
            self.run_spec("moe_route", spec, fold(x.rows), push);
        }
        // The router and the routing wrote only their own outputs: x's quantization by the norm
        // before them still serves the experts. (The routing declares no output, so the first
        // expert mat-vec, which reads its ids, waits behind a barrier all the same.)
        if primed {
            self.quant_still_valid();
        }
        let scales: Vec<Option<u64>> = w.scales.iter().map(|s| self.scale_buffer(*s)).collect();
        // Prompts on cooperative matrices group the slots by expert first; decode steps (and
        // devices without them, float experts, rows not a multiple of 32) go slot by slot. The
        // tile table is the dispatch's x (at most 65,535 entries); the kernel's byte offsets are
        // 32-bit, as every kernel's, so expert tensors of 4 GiB or more go slot by slot too.
        let [wg, sgm, _] = self.tune.moe_spec;
        let slots_per_tile = cm_tile_tokens(wg, sgm, self.tune.moe_tm);
        let grouped = self.tune.coopmat
            && x.rows > 4
            && n_expert <= MOE_SORT_EXPERTS
            && nslots.div_ceil(slots_per_tile) + n_expert <= 65535
            && experts.iter().all(|m| {
                !is_float(m.ty) && m.cols().is_multiple_of(32) && m.buf.size <= u32::MAX as u64
            });
        let groups = grouped.then(|| self.moe_groups(ids.addr(), nslots, n_expert));
        let proj = |m: &VkWeight, off: usize, n: usize, input: &VkTensor, s, per_slot| match &groups
        {
            Some(gr) => self.moe_project_grouped(m, off, n, input, gr, s, nslots, k, per_slot),
            None => self.moe_project(m, off, n, input, ids.addr(), s, nslots, k, per_slot),
        };
        // Gate rows first, then up rows, within each expert of a fused tensor.
        let (pair, n_ff) = match &w.gate_up {
            GateUp::Separate { gate, up } => ([(*gate, 0), (*up, 0)], gate.rows()),
            GateUp::Fused(gu) => ([(*gu, 0), (*gu, gu.rows() / 2)], gu.rows() / 2),
        };
        // Decode steps: the activation in the gate and up mat-vecs' tail where it can be.
        let slots = GluSlots {
            ids: ids.addr(),
            scales: [scales[0], scales[1]],
            nslots,
            k,
        };
        let fused = groups
            .is_none()
            .then(|| self.glu_fused(pair, n_ff, x, w.act, Some(slots)))
            .flatten();
        let a = match fused {
            Some(a) => a,
            None => {
                let [(gw, g0), (uw, u0)] = pair;
                let g = proj(gw, g0, n_ff, x, scales[0], false);
                let u = proj(uw, u0, n_ff, x, scales[1], false);
                // Slot by slot, the down projection's input is quantized as it is produced,
                // where moe_matvecq reads it.
                let int_down = !grouped
                    && self.tune.int_dot
                    && act_mode(w.down.ty).is_some_and(|(m, _)| m <= 2);
                self.gated_for(&g, &u, w.act, int_down)
            }
        };
        if groups.is_none() && self.tune.moe_fused_down {
            let ids = ids.addr();
            let done =
                self.moe_down_combined(w.down, &a, ids, &wts, scales[2], k, out, next, accumulate);
            if let Some(fused) = done {
                return fused;
            }
        }
        let y = proj(w.down, 0, w.down.rows(), &a, scales[2], true);
        self.moe_combine(&y, &wts, x.rows, k, out, accumulate);
        None
    }

    /// Decode steps: the router's logits and the routing in one dispatch (matvec.comp's ROUTE,
    /// its last workgroup of each token routing it as moe_route.comp does), writing `ids` and
    /// `wts`; false (nothing recorded) where it does not apply.
    fn route_fused(
        &self,
        router: &VkWeight,
        x: &VkTensor,
        ids: &VkTensor,
        wts: &VkTensor,
        k: usize,
        renorm: bool,
    ) -> bool {
        let tpr = self.tune.threads_per_row;
        let (rows, cols) = (router.rows(), router.cols());
        let fits = self.tune.router_routes
            && self.tune.route_rank
            && self.tune.shuffle
            && router.ty == GgmlType::F32
            && x.rows <= ROUTE_COUNTERS.min(4)
            && x.cols == cols
            && tpr > 1
            && self.tune.router_wg.is_multiple_of(tpr)
            && rows <= MOE_SORT_EXPERTS
            && (1..=64).contains(&k);
        if !fits {
            return false;
        }
        // A deferred norm's scale is applied to the logits (matvec.comp's has_rs).
        let logits = self.new_tensor(x.rows, rows);
        let scale = x.norm_scale();
        let route = Some((ids, wts, k, renorm));
        match self.router_norm_in(router, x, scale.is_some()) {
            Some(n) => self.matvec_f(router, x, n.src, logits.addr(), None, route, Some(n)),
            None => self.matvec_f(
                router,
                x,
                x.key(),
                logits.addr(),
                scale.as_deref(),
                route,
                None,
            ),
        }
        true
    }

    /// Where the router's input `x` is the decode norm recorded last (nothing since) and
    /// matvec.comp's SN applies (its V4 path, shuffles, a norm workgroup of 4·TPR invocations or
    /// more, subgroups of 4 lanes or more, TPR at most their square, its shared memory within the
    /// device's), that norm: the router then
    /// normalizes the norm's input itself, beside the norm, not in a stage after it
    /// (`VulkanOptions::router_norm`). `scaled`: x is a deferred norm's (none then).
    fn router_norm_in(&self, router: &VkWeight, x: &VkTensor, scaled: bool) -> Option<NormOrigin> {
        let n = (*self.last_norm.lock().unwrap_or_else(|e| e.into_inner()))?;
        let tpr = self.tune.threads_per_row;
        let sgs = self.ctx.info.subgroup_size;
        // matvec.comp's shared memory with SN: its SN sums, (WG / 4) · SN_H pairs of floats,
        // beside the rest (route.glsl's arrays, the row tree, the scale's parts; under 7 KB).
        let sn_h = n.wg.div_ceil(4 * tpr.max(1)) as usize;
        let shared = 8 * (self.tune.router_wg as usize / 4) * sn_h + 7 * 1024;
        // A timing ablation that leaves the norm out or records the router twice keeps the
        // router a stage of its own (the doubled copy shares its counters).
        let fits = self.tune.router_norm
            && !self.ablation_touches("norm_quant")
            && !self.ablation_touches("router_routed")
            && !scaled
            && self.tune.shuffle
            && n.out == x.key()
            && n.ops == self.rec().ops
            && n.cols == x.cols
            && x.cols.is_multiple_of(4)
            && n.wg.is_power_of_two()
            && n.wg >= 4 * tpr
            && sgs >= 4
            && tpr <= sgs * sgs
            && shared <= self.ctx.info.max_shared_memory as usize
            && [n.src, n.w, router.buf.address]
                .iter()
                .all(|a| a.is_multiple_of(16))
            && router.row_bytes.is_multiple_of(16);
        fits.then_some(n)
    }

    /// Decode steps: the down-projection of every slot and their weighted sum in one dispatch
    /// (matvec_dec.comp's `MOE` = 2: a group of lanes a slot, weighted before the groups' sums
    /// are added in group order — slot order for up to 8 slots), into `out` or added to it;
    /// `None` (nothing recorded) where it does not apply (not a K-quant on matvec_dec, or no
    /// integer input). With `next` (`accumulate` then), the RMSNorm fused into it where it
    /// can be: `Some(Some(its output))`.
    #[allow(clippy::too_many_arguments)]
    fn moe_down_combined(
        &self,
        w: &VkWeight,
        a: &VkTensor,
        ids: u64,
        wts: &VkTensor,
        scale: Option<u64>,
        k: usize,
        out: &VkTensor,
        next: Option<(&VkWeight, f32)>,
        accumulate: bool,
    ) -> Option<Option<VkTensor>> {
        let ntok = a.rows / k.max(1);
        let expert_bytes = w.rows() as u64 * w.row_bytes;
        if !self.tune.int_dot || !self.dec_kernel_for(w, ntok) || !expert_bytes.is_multiple_of(16) {
            return None;
        }
        let ((q, s, _, _), x32) = self.quant_input_dec(w.ty, a, false, true)?;
        let (nrows, cols) = (w.rows(), w.cols());
        // A group of lanes a slot (up to 8 groups and 256 invocations, within the device's
        // workgroups; more slots take turns), NR rows a workgroup.
        // Lanes left to the workgroup (`VulkanOptions::moe_lanes`): MOE_DOWN_WG invocations over
        // the groups, at least a block's lanes.
        let [lpr, nr, _, pb] = self.dec_shape_moe(w, true);
        let pb = pb & !DEC_PAIR;
        let most = self.ctx.info.max_workgroup.min(256);
        let slots = (k.next_power_of_two() as u32).min(8);
        // (At most 32: wider groups than NVIDIA's subgroups meet through shared memory.)
        let lpr = match self.tune.moe_lanes[1] {
            0 => (MOE_DOWN_WG / slots)
                .clamp(8 / (pb & 15).max(1), 32)
                .min(most),
            _ => lpr,
        };
        let groups = slots.min((most / lpr).max(1));
        let wg = lpr * groups;
        let g = grid(ntok, nrows.div_ceil(nr as usize));
        let moe = DecMoe {
            ids,
            scale: scale.unwrap_or(0),
            wts: wts.addr(),
            expert16: (expert_bytes / 16) as u32,
            k: k as u32,
            x_per_slot: true,
            has_scale: scale.is_some(),
            row0: 0,
        };
        let addrs = [w.buf.address, q, s, out.addr()];
        let dims = [
            cols as u32,
            nrows as u32,
            w.row_bytes as u32,
            ntok as u32,
            accumulate as u32,
        ];
        let fuse = next
            .filter(|_| accumulate)
            .and_then(|(norm, eps)| self.fuse_begin(ntok, nrows, norm, eps, (wg, nr)));
        let norm = DecNorm {
            x32,
            ..fuse.as_ref().map(FuseOut::push).unwrap_or_default()
        };
        let push = dec_push(addrs, dims, &moe, &norm);
        let label = self.shape_label("moe_down_combined", nrows, cols);
        let spec = [wg, lpr, nr, 2, pb, norm.spec()];
        let name = variant("matvec_dec", w.ty);
        let writes = (!accumulate).then_some(out.addr());
        self.run_labeled(name, label, spec, g, push, writes, false);
        Some(fuse.map(|f| self.fuse_end(f)))
    }

    /// A token's k expert outputs (rows of `y`, one per slot) summed with their routing weights,
    /// into `out` or (`accumulate`) added to it.
    fn moe_combine(
        &self,
        y: &VkTensor,
        wts: &VkTensor,
        ntok: usize,
        k: usize,
        out: &VkTensor,
        accumulate: bool,
    ) {
        let n_embd = y.cols;
        let n = ntok * n_embd;
        let mut push = Push::new();
        push.a(y.addr())
            .a(wts.addr())
            .a(out.addr())
            .w(n_embd as u32)
            .w(k as u32)
            .w(ntok as u32)
            .w(accumulate as u32);
        self.run("moe_combine", 256, fold(n.div_ceil(256)), push);
    }
}
