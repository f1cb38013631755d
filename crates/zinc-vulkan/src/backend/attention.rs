//! Decode attention on the Vulkan backend: attn_dec.comp's plan for a step (slices, query heads
//! a workgroup, its forms: two passes, one pass, each key read once for several heads) and its
//! dispatch with the q/k preparation folded in, attn_combine.comp's merge of the slices, the
//! prompt attention's cooperative-matrix variant, and RoPE's table for one row.

use super::*;

/// attn_dec.comp's shape for one decode step (`attn_dec_plan`).
struct AttnDecPlan {
    /// Its LPK: invocations per key.
    lpk: usize,
    /// Keys a slice.
    split_len: usize,
    /// Query heads a workgroup.
    heads: usize,
    /// One slice, each workgroup writing its heads' output (no merge).
    direct: bool,
    /// Its workgroup size (WG).
    wg: u32,
    /// Keys and values in one pass (`attn_dec.comp`'s ONE_PASS).
    one: bool,
    /// Each key read once for all of the workgroup's heads (`attn_dec.comp`'s KROWS).
    rows: bool,
    /// On cooperative matrices (`attn_dec_cm.comp`; its BLOCKS form with `blocks`): all of a
    /// KV head's query heads a workgroup, split slices only.
    cm: bool,
    blocks: bool,
}

/// Shared memory of `attn_dec_cm.comp` for heads of `hd` and `g` query heads a workgroup, in
/// its BLOCKS form where `blocks`, with attn_prep.glsl's arrays where `prep` (its `hsc` padded
/// to 12 words) and the clock's words where `clock`: the queries' two f16 tiles (16 rows of
/// hd + 8 halves), the key/value tiles (4 subgroups' of 16 rows, or one of 64), the score
/// tiles (4 of 16 × 20 f32, or one of 16 × 68), the weight tiles (two f16 parts: 4 of 16 × 24,
/// or one of 16 × 72), the rows' factors (3 × 4 × 16 f32, or 16), and the queries in f32.
fn attn_dec_cm_shared_bytes(hd: usize, g: usize, blocks: bool, prep: bool, clock: bool) -> usize {
    let prep = if prep { 4 * (5 * hd + 12) } else { 0 };
    let clock = if clock { 4 * 13 } else { 0 };
    let tiles = if blocks {
        64 * (hd + 8) * 2 + 16 * 68 * 4 + 2 * 16 * 72 * 2 + 16 * 4
    } else {
        4 * 16 * (hd + 8) * 2 + 4 * 16 * 20 * 4 + 2 * 4 * 16 * 24 * 2 + 3 * 4 * 16 * 4
    };
    2 * 16 * (hd + 8) * 2 + tiles + 4 * g * hd + prep + clock
}

impl VulkanBackend {
    /// Split-K attention, pass 2 (one query row): the partials merged into `out`
    /// (attn_combine.comp), which also quantizes it for the out-projection where the heads group
    /// into whole blocks.
    pub(super) fn attn_combine(
        &self,
        part: &VkTensor,
        out: &VkTensor,
        p: &AttnParams,
        nsplit: usize,
    ) {
        let hd = p.head_dim;
        let target = self.quant_target(1, p.n_head * hd).and_then(|t| {
            let block = mode_block(t.0)?;
            let hpb = block.div_ceil(hd).max(1);
            let fits = hpb <= 8 && p.n_head.is_multiple_of(hpb) && (hpb * hd).is_multiple_of(block);
            fits.then_some((t, hpb))
        });
        let (mode, qa, sa, hpb) = match &target {
            Some(((m, qb, sb), hpb)) => (*m, qb.addr(), sb.addr(), *hpb),
            None => (0, 0, 0, 1),
        };
        let mut push = Push::new();
        push.a(part.addr())
            .a(out.addr())
            .a(qa)
            .a(sa)
            .w(p.n_head as u32)
            .w(hd as u32)
            .w(1)
            .w(nsplit as u32)
            .w(hpb as u32)
            .w(mode);
        let shader = if self.tune.combine_ahead {
            "attn_combine_ahead"
        } else {
            "attn_combine"
        };
        self.run(shader, 64, [(p.n_head / hpb) as u32, 1, 1], push);
        if let Some(((m, qb, sb), _)) = target {
            self.quant_primed(out, m, qb, sb);
        }
    }

    /// The cooperative-matrix prompt attention (`attn_fa`) compiled for this head dimension,
    /// where it applies (prompts of more than 4 rows, head dimensions 32, 64 or 128).
    pub(super) fn attn_fa_variant(&self, rows: usize, head_dim: usize) -> Option<&'static str> {
        let name = match head_dim {
            32 => "attn_fa_32",
            64 => "attn_fa_64",
            128 => "attn_fa_128",
            _ => return None,
        };
        let fits = attn_fa_shared_bytes(head_dim) <= self.ctx.info.max_shared_memory as usize;
        (self.tune.coopmat && self.tune.shuffle && rows > 4 && fits).then_some(name)
    }

    /// attn_dec.comp's plan for a decode step over `keys` keys, the output quantized in
    /// `block`s where it says, where the kernel applies: up to 8 query heads a KV head, head
    /// dimensions a multiple of 8, subgroup shuffles, slices of up to 1,024 keys (at most
    /// `MAX_SPLITS` of them) and the shared memory for their scores (and, for attn_dec_prep,
    /// `prep`, its own arrays); `None` elsewhere.
    fn attn_dec_plan(
        &self,
        p: &AttnParams,
        keys: usize,
        block: Option<usize>,
        prep: bool,
    ) -> Option<AttnDecPlan> {
        self.attn_dec_plan_with(p, keys, block, prep, self.tune.attn_rows)
    }

    /// `attn_dec_plan` with each key read once for up to `rows` query heads where it applies
    /// (0: never); a rows plan that does not fit the device is planned again without.
    fn attn_dec_plan_with(
        &self,
        p: &AttnParams,
        keys: usize,
        block: Option<usize>,
        prep: bool,
        rows_heads: usize,
    ) -> Option<AttnDecPlan> {
        let hd = p.head_dim;
        let subgroups = self.tune.shuffle && self.ctx.info.subgroup_arithmetic;
        if !subgroups || p.n_head_kv == 0 || !p.n_head.is_multiple_of(p.n_head_kv) {
            return None;
        }
        let g = p.n_head / p.n_head_kv;
        if g > 8 || hd == 0 || !hd.is_multiple_of(8) || hd > 512 {
            return None;
        }
        // The largest power of two dividing hd / 8, within a subgroup (and 32). Intel GPUs
        // may run a compute shader in subgroups of 8 whatever size they report: 8 at most there.
        const INTEL: u32 = 0x8086;
        let most = if self.ctx.info.vendor_id == INTEL {
            8
        } else {
            32
        };
        let sgs = self.ctx.info.subgroup_size.clamp(1, most) as usize;
        let lpk = (1usize << (hd / 8).trailing_zeros()).min(sgs);
        let divisors = (1..=g.min(8)).filter(|d| g.is_multiple_of(*d));
        let direct = keys <= self.tune.attn_direct;
        // On cooperative matrices (`attn_cm`): a KV head's query heads (up to 8) a workgroup
        // over split slices of a multiple of 64 keys (at least 64): the kernel's four subgroups
        // take blocks of 16 in turn, so each takes as many.
        let blocks = self.tune.attn_cm == 2;
        if !direct
            && self.tune.attn_cm != 0
            && matches!(hd, 32 | 64 | 128)
            && self.tune.attn_ablate == 0
            && attn_dec_cm_shared_bytes(hd, g, blocks, prep, self.clock.is_some())
                <= self.ctx.info.max_shared_memory as usize
        {
            let split_len = keys
                .div_ceil(self.tune.attn_slices)
                .next_multiple_of(64)
                .clamp(64, 1024);
            return (keys.div_ceil(split_len) <= MAX_SPLITS).then_some(AttnDecPlan {
                lpk,
                split_len,
                heads: g,
                direct: false,
                wg: 128,
                one: false,
                rows: false,
                cm: true,
                blocks,
            });
        }
        // Split slices with each key read once for several of a KV head's query heads
        // (`VulkanOptions::attn_rows`), where an invocation holds 8 dimensions in the value pass
        // and 4 of a key's 16-byte pieces in the score pass.
        let rows =
            !direct && rows_heads > 0 && lpk * 8 == hd && lpk >= 4 && self.tune.attn_ablate == 0;
        let (split_len, heads) = if direct {
            // One slice; the fewest heads a workgroup whose outputs make whole blocks of the
            // quantization (one, unquantized — the out-projection quantizes its input itself —
            // where none do).
            let b = block.unwrap_or(1);
            let heads = divisors
                .clone()
                .find(|d| (d * hd).is_multiple_of(b))
                .unwrap_or(1);
            (keys.next_multiple_of(16), heads)
        } else {
            // About `attn_slices` slices (ATTN_DEC_SLICES by default) of 32 to 1,024 keys, a
            // multiple of 16 (at least 16, 64 or 128 keys a slice measured no faster than 32);
            // the most heads a workgroup up to `attn_heads`.
            let split_len = keys
                .div_ceil(self.tune.attn_slices)
                .next_multiple_of(16)
                .clamp(32, 1024);
            let most = if rows {
                rows_heads
            } else {
                self.tune.attn_heads
            };
            let heads = divisors.filter(|d| *d <= most).max().unwrap_or(1);
            (split_len, heads)
        };
        // qs, ps, red, ml, is_last, wexp, quant8.glsl's four arrays of WG words and PREP's.
        let h = heads;
        let fits = |wg: u32| {
            // attn_dec_prep's kf, nws, kn, vn, hsc and rcs (RoPE's table: hd / 2 pairs)
            let prep = if prep { 5 * hd + 9 } else { 0 };
            // The clocked variant's words (clock.glsl: 5, common.glsl's CLK_MARKS: 8).
            let clock = if self.clock.is_some() { 13 } else { 0 };
            let shared = 4
                * (h * hd
                    + h * 1024
                    + h * lpk * 8
                    + 24
                    + 1
                    + 8 * MERGE_SPLITS
                    + 4 * wg as usize
                    + prep
                    + clock);
            shared <= self.ctx.info.max_shared_memory as usize
        };
        // Keys and values in one pass (`VulkanOptions::attn_one_pass`; by default over every
        // slice) where an invocation holds 8 dimensions of a head.
        let one = !rows
            && self.tune.attn_one_pass.unwrap_or(true)
            && lpk * 8 == hd
            && self.tune.attn_ablate == 0;
        // The workgroup: as given, else 256 invocations for one slice of one head a workgroup
        // and, in two passes, for slices of 256 keys or more where they fit (more of a slice's
        // keys in flight), 128 otherwise: one slice of several heads a workgroup measured faster
        // at 128 on the H200, and one pass over split slices (78 registers: at 256 a long
        // context's 512 workgroups no longer fit the GPU at once) on the H100.
        let wide = ((direct && heads == 1) || (split_len >= 256 && !one) || rows)
            && self.ctx.info.max_workgroup >= 256
            && fits(256);
        let wg = self.tune.attn_wg.unwrap_or(if wide { 256 } else { 128 });
        if keys.div_ceil(split_len) > MAX_SPLITS || split_len > 1024 || !fits(wg) {
            return match rows {
                true => self.attn_dec_plan_with(p, keys, block, prep, 0),
                false => None,
            };
        }
        Some(AttnDecPlan {
            lpk,
            split_len,
            heads,
            direct,
            wg,
            one,
            rows,
            cm: false,
            blocks: false,
        })
    }

    /// RoPE's table for a decode step's one row (`VulkanOptions::attn_rope_table`), as the
    /// kernels that prepare attention's inputs take it (`rope_table`), made once a step for
    /// each rotation (`ROPE_TABLES` kept): `None`
    /// for several rows or with the option off (the kernels then step their own angles).
    pub(super) fn rope_words(
        &self,
        positions: &[u32],
        rope: &RopeParams,
        head_dim: usize,
    ) -> Option<Arc<[u32]>> {
        let (&[pos], true) = (positions, self.tune.attn_rope_table) else {
            return None;
        };
        let key = (
            pos,
            rope.n_rot.min(head_dim),
            rope.freq_base.to_bits(),
            rope.freq_scale.to_bits(),
        );
        let mut cache = self.rope_cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.iter().find(|c| c.key == key) {
            return Some(c.words.clone());
        }
        let words: Arc<[u32]> = rope_table(pos, rope, head_dim).into();
        if cache.len() == ROPE_TABLES {
            cache.remove(0);
        }
        cache.push(RopeTable {
            key,
            words: words.clone(),
        });
        Some(words)
    }

    /// Whether a decode attention of `rows` rows at `positions` goes to attn_dec.comp (where
    /// its plan fits, `attn_dec`).
    pub(super) fn attn_dec_takes(&self, rows: usize, positions: &[u32], p: &AttnParams) -> bool {
        let (_, keys) = attn_keys(positions, p);
        rows == 1 && (keys > SPLIT_KV || !self.tune.cpu_attention)
    }

    /// A decode step's attention on attn_dec.comp, where its plan fits (else `None`, nothing
    /// recorded); with `prep`, the raw q/k/v of its one row normed, rotated and stored by the
    /// same dispatch (its PREP: qk_prep.comp's work, the caller having checked `prep_fits`).
    pub(super) fn attn_dec(
        &self,
        q: &VkTensor,
        cache: &VkKvCache,
        layer: usize,
        positions: &[u32],
        p: &AttnParams,
        prep: Option<&Prep<'_>>,
    ) -> Option<VkTensor> {
        let (_, keys) = attn_keys(positions, p);
        let window = p.window.unwrap_or(0) as u32;
        // One slice (`direct`), or slices merged in place (`attn_merge`), for an out-projection
        // that reads Q8_K (a K-quant's): chunks of 32 with their own scales instead
        // (`attn_x32`; matvec_dec.comp's X32), so that a workgroup may hold a single head
        // where Q8_K's blocks need more (heads under 256 wide). Not where the out-projection
        // may wait beside the attention (early weights' EARLY_O, with PREP: a waiting mat-vec
        // reads Q8_K), nor once a reader refused the chunks (`attn_x32_refused`).
        let early_o = prep.is_some() && self.tune.early_weights & tuning::EARLY_O != 0;
        let refused = self.attn_x32_refused.load(Relaxed);
        let x32_ok = self.tune.attn_x32
            && !(early_o || refused || p.head_dim.is_multiple_of(256))
            && self.last_mode.load(Relaxed) == 2;
        let cols = p.n_head * p.head_dim;
        // Merged in place only where asked (`attn_merge`) and for up to MERGE_SPLITS slices
        // (at most a counter a workgroup column). (On the H200 attn_combine.comp was faster at
        // short contexts as well as long ones while a merged head's output could not be
        // quantized by the merge: Qwen3-8B at 4,096 tokens, slices then chosen for about 64:
        // 147 → 131 tok/s merged in place.)
        let merges = |plan: &AttnDecPlan| {
            !plan.direct
                && !plan.cm
                && self.tune.attn_merge
                && p.n_head / plan.heads <= ATTN_COUNTERS
                && keys.div_ceil(plan.split_len) <= MERGE_SPLITS
        };
        let plan_in = |block: Option<usize>| self.attn_dec_plan(p, keys, block, prep.is_some());
        // Chunks of 32 where their plan has one slice or merges its own (no tensor made to
        // find out).
        let plan32 = x32_ok
            .then(|| self.quant_block(1, cols, false, 1))
            .flatten()
            .and_then(|b| plan_in(Some(b)));
        let x32 = plan32.as_ref().is_some_and(|pl| pl.direct || merges(pl));
        let target = if x32 {
            self.quant_target_in(1, cols, false, 1)
        } else {
            self.quant_target(1, cols)
        };
        let block = target.as_ref().and_then(|t| mode_block(t.0));
        let plan = if x32 { plan32 } else { plan_in(block) }?;
        let merge = merges(&plan);
        // The raw keys and values, and the rest of PREP's parameters (uploaded).
        let prm = match prep {
            Some(r) => {
                self.settle(q);
                self.settle(r.k);
                self.settle(r.v);
                let qw = r.norms.0.map_or(0, |w| w.buf.address);
                let kw = r.norms.1.map_or(0, |w| w.buf.address);
                // RoPE's cos and sin for the row's position from the host (a decode step of
                // one row), computed as the CPU backend computes them.
                let table = self.rope_words(positions, r.rope, p.head_dim);
                let flags = r.norms.0.is_some() as u32
                    | (r.norms.1.is_some() as u32) << 1
                    | (r.q_scale.is_some() as u32) << 2
                    | (table.is_some() as u32) << 3;
                let words = vec![
                    qw as u32,
                    (qw >> 32) as u32,
                    kw as u32,
                    (kw >> 32) as u32,
                    r.rope.n_rot as u32,
                    (r.rope.style == RopeStyle::Neox) as u32,
                    r.rope.freq_base.to_bits(),
                    r.rope.freq_scale.to_bits(),
                    r.eps.to_bits(),
                    flags,
                    r.q_scale.unwrap_or(1.0).to_bits(),
                ];
                (r.k.addr(), r.v.addr(), words, table)
            }
            None => (0, 0, Vec::new(), None),
        };
        let out = self.new_tensor(q.rows, p.n_head * p.head_dim);
        let pos = self.upload(&u32s(positions));
        // Query heads of a KV head together (attn_dec.comp): with one slice (`direct`)
        // each workgroup writes and quantizes its heads' output; else the slices are
        // merged and the output quantized for the out-projection by attn_combine.comp
        // (or, with `attn_merge`, by the last workgroup of each group of heads where
        // they make whole blocks: one dispatch).
        let AttnDecPlan {
            lpk,
            split_len,
            heads,
            direct,
            wg,
            one,
            rows,
            cm,
            blocks,
        } = plan;
        let nsplit = keys.div_ceil(split_len);
        let part = (!direct).then(|| self.new_tensor(p.n_head * nsplit, p.head_dim + 2));
        let whole = block.is_some_and(|b| (heads * p.head_dim).is_multiple_of(b));
        let target = target.filter(|_| whole);
        let workgroups = p.n_head / heads;
        let (mode, qa, sa) = target
            .as_ref()
            .filter(|_| merge || direct)
            .map_or((0, 0, 0), |(m, qb, sb)| (*m, qb.addr(), sb.addr()));
        // Early weights (PREP, one slice, the output quantized): the out-projection may wait
        // for this dispatch beside it; words 11–13 of PREP's block, the epoch and the slot.
        let sync = (prep.is_some() && direct && mode != 0)
            .then(|| self.sync_begin())
            .flatten();
        let prm = match prep {
            Some(_) => {
                let mut words = prm.2;
                let (slot, epoch) = sync.unwrap_or((0, 0));
                words.extend([epoch, slot as u32, (slot >> 32) as u32]);
                // From word 14, RoPE's table.
                words.extend(prm.3.iter().flat_map(|t| t.iter()));
                (prm.0, prm.1, self.upload(&u32s(&words)))
            }
            None => (0, 0, 0),
        };
        let mut pc = Push::new();
        pc.a(q.addr())
            .a(cache.k[layer].address)
            .a(cache.v[layer].address)
            .a(out.addr())
            .a(pos)
            .a(part.as_ref().map_or(0, |t| t.addr()))
            .a(qa)
            .a(sa)
            .a(self.attn_count.address)
            .a(prm.0)
            .a(prm.1)
            .a(prm.2)
            .w(p.n_head as u32)
            .w(p.n_head_kv as u32)
            .f(p.scale)
            .w(window)
            .w(split_len as u32)
            .w(mode)
            .w((p.n_head / p.n_head_kv) as u32)
            .w(direct as u32);
        let g = [workgroups as u32, 1, nsplit as u32];
        let spec = [
            p.head_dim as u32,
            heads as u32,
            lpk as u32,
            merge as u32,
            wg,
            // U and the ablation bits (attn_dec.comp's UX).
            self.tune.attn_ahead | self.tune.attn_ablate << 8,
        ];
        // Keys and values in one pass or two (the plan's). (The label's first word is the
        // two-pass form's, so `skip_kernels` and the ablation name both alike.)
        // Each key read once: 2 or 4 keys an invocation a pass (KROWS; U unused there).
        let two = self.tune.attn_rows_keys == 2;
        // On cooperative matrices: compiled per head dimension (the plan's 32, 64 or 128).
        let cm_shader = |prep: bool| match (prep, blocks, p.head_dim) {
            (true, false, 32) => "attn_dec_cm_prep_32",
            (true, false, 64) => "attn_dec_cm_prep_64",
            (true, false, _) => "attn_dec_cm_prep_128",
            (false, false, 32) => "attn_dec_cm_32",
            (false, false, 64) => "attn_dec_cm_64",
            (false, false, _) => "attn_dec_cm_128",
            (true, true, 32) => "attn_dec_cm_prep_blk_32",
            (true, true, 64) => "attn_dec_cm_prep_blk_64",
            (true, true, _) => "attn_dec_cm_prep_blk_128",
            (false, true, 32) => "attn_dec_cm_blk_32",
            (false, true, 64) => "attn_dec_cm_blk_64",
            (false, true, _) => "attn_dec_cm_blk_128",
        };
        let (shader, label) = match (prep, one, rows) {
            _ if cm => (
                cm_shader(prep.is_some()),
                if prep.is_some() {
                    "attn_prep cm"
                } else {
                    "attn_dec cm"
                },
            ),
            (Some(_), _, true) if two => ("attn_dec_prep_rows2", "attn_prep rows"),
            (Some(_), _, true) => ("attn_dec_prep_rows", "attn_prep rows"),
            (None, _, true) if two => ("attn_dec_rows2", "attn_dec rows"),
            (None, _, true) => ("attn_dec_rows", "attn_dec rows"),
            (Some(_), false, false) => ("attn_dec_prep", "attn_prep"),
            (Some(_), true, false) => ("attn_dec_prep_one", "attn_prep one-pass"),
            (None, false, false) => ("attn_dec", "attn_dec"),
            (None, true, false) => ("attn_dec_one", "attn_dec one-pass"),
        };
        self.run_labeled(shader, label, spec, g, pc, None, false);
        self.sync_recorded(sync, qa, true);
        match part {
            Some(part) if !merge => self.attn_combine(&part, &out, p, nsplit),
            _ => {
                if let (Some((m, qb, sb)), true) = (target, mode != 0) {
                    let at = (qb.addr(), sb.addr());
                    if x32 {
                        self.attn_x32_at.store(at.1, Relaxed);
                    }
                    self.quant_primed_at(&out, m, at, (qb, Some(sb)), x32);
                }
            }
        }
        Some(out)
    }
}
