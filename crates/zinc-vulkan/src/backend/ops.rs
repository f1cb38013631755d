//! `impl Backend for VulkanBackend`: the engine's ops on the Vulkan backend, each recording its
//! dispatches through the helpers of `backend.rs` and its submodules (weights and tensors,
//! embeddings, norms, RoPE, mat-vecs, the KV cache and attention, MoE FFNs, reads, the steps
//! recorded ahead).

use super::*;

impl Backend for VulkanBackend {
    type Weight = VkWeight;
    type Tensor = VkTensor;
    type KvCache = VkKvCache;

    fn name(&self) -> String {
        format!("vulkan ({})", self.ctx.info.name)
    }

    fn profile_report(&self) -> Option<Vec<(String, f64, u64)>> {
        self.rec().prof.as_ref().map(|_| ())?;
        Some(self.profile())
    }

    fn kernel_stats(&self) -> Option<Vec<String>> {
        self.pipeline_stats().unwrap_or_else(|e| fatal(e))
    }

    fn clock_step(&self) -> Option<zinc_backend::ClockStep> {
        VulkanBackend::clock_step(self).unwrap_or_else(|e| fatal(e))
    }

    fn clock_reset(&self) -> bool {
        VulkanBackend::clock_reset(self).unwrap_or_else(|e| fatal(e))
    }

    fn host_waited(&self) -> Option<std::time::Duration> {
        Some(self.rec().waited)
    }

    fn dependent_stages(&self) -> Option<u64> {
        Some(self.rec().barriers)
    }

    fn host_gaps(&self) -> Option<zinc_backend::HostGaps> {
        let mut rec = self.rec();
        // An open gap counts from now on (the caller's work before this is not the step's).
        let reading = rec.gaps.reading;
        if let Some(l) = rec.landed.as_mut() {
            *l = (std::time::Instant::now(), reading);
        }
        Some(rec.gaps)
    }

    fn device_busy(&self) -> Option<std::time::Duration> {
        // The clock starts with the first question (steps nobody times write no timestamps).
        self.rec().steps.as_mut().map(|c| {
            c.on = true;
            c.busy
        })
    }

    fn ablation(&self, skip: Option<&[String]>) -> Option<Vec<(String, u64)>> {
        let mut a = self.ablation.lock().unwrap_or_else(|e| e.into_inner());
        let mut counts: Vec<(String, u64)> =
            a.counts.iter().map(|(k, &n)| (k.to_string(), n)).collect();
        counts.sort();
        if let Some(names) = skip {
            let allowed = |n: &&String| !NEVER_SKIPPED.contains(&n.as_str());
            a.skip = names.iter().filter(allowed).cloned().collect();
            a.counts.clear();
            self.ablating.store(true, Relaxed);
        }
        Some(counts)
    }

    /// Every weight format has kernels (`shaders/dequant.glsl`).
    fn supports(&self, ty: GgmlType) -> bool {
        zinc_backend::WEIGHT_FORMATS.contains(&ty)
    }

    fn weight(&self, model: &Arc<GgufModel>, name: &str) -> Result<VkWeight, BackendError> {
        let (index, t) = zinc_backend::find_weight(self, "vulkan", model, name)?;
        let dims = t.info.dims.clone();
        // 1-D weights (norms, biases, scales) live as f32: the kernels that use them read f32.
        let (ty, bytes): (GgmlType, std::borrow::Cow<[u8]>) = if dims.len() <= 1 {
            let n = t.info.n_elements as usize;
            let v = zinc_quant::dequantize_to_vec(t.info.ty, t.data, n).map_err(|_| {
                BackendError::BadShape {
                    name: name.to_string(),
                    dims: dims.clone(),
                    expected: "a decodable 1-D tensor".into(),
                }
            })?;
            (GgmlType::F32, f32s(&v).into())
        } else {
            (t.info.ty, t.data.into())
        };
        let cols = dims.first().copied().unwrap_or(1);
        let (row_bytes, bytes) = device_layout(ty, cols, bytes);
        let upload = || -> Result<Buffer, VulkanError> {
            let buf = self.ctx.buffer(bytes.len() as u64, Memory::Device)?;
            self.upload_to(&buf, &bytes)?;
            Ok(buf)
        };
        let buf = upload().map_err(|e| BackendError::BadShape {
            name: name.to_string(),
            dims: dims.clone(),
            expected: format!("a tensor the device can hold: {e}"),
        })?;
        Ok(VkWeight {
            id: self.next_weight_id.fetch_add(1, Relaxed),
            buf,
            ty,
            dims,
            row_bytes,
            model: model.clone(),
            index,
        })
    }

    fn weight_dims<'w>(&self, w: &'w VkWeight) -> &'w [u64] {
        &w.dims
    }

    fn weight_values(&self, w: &VkWeight) -> Vec<f32> {
        let Some(t) = w.model.tensor_by_index(w.index) else {
            return Vec::new();
        };
        zinc_quant::dequantize_to_vec(t.info.ty, t.data, t.info.n_elements as usize)
            .unwrap_or_default()
    }

    fn tensor(&self, rows: usize, cols: usize) -> VkTensor {
        let t = self.new_tensor(rows, cols);
        self.rec()
            .fill_zero(t.buffer().buffer, (rows * cols * 4) as u64)
            .unwrap_or_else(|e| fatal(e));
        t
    }

    fn copy(&self, t: &VkTensor) -> VkTensor {
        self.settle(t);
        let out = self.new_tensor(t.rows, t.cols);
        self.rec()
            .copy(
                t.buffer().buffer,
                0,
                out.buffer().buffer,
                0,
                (t.len() * 4) as u64,
            )
            .unwrap_or_else(|e| fatal(e));
        out
    }

    fn split_cols(&self, t: &VkTensor, widths: &[usize]) -> Vec<VkTensor> {
        self.settle(t);
        let mut col0 = 0;
        widths
            .iter()
            .map(|&w| {
                let part = self.gather(t, col0, w, None);
                col0 += w;
                part
            })
            .collect()
    }

    fn tensor_from(&self, data: &[f32], rows: usize, cols: usize) -> VkTensor {
        let out = self.new_tensor(rows, cols);
        let bytes = f32s(&data[..(rows * cols).min(data.len())]);
        let mut rec = self.rec();
        let src = rec.upload(&bytes).unwrap_or_else(|e| fatal(e));
        let off = src - rec.arena.address;
        let arena = rec.arena.buffer;
        rec.copy(arena, off, out.buffer().buffer, 0, bytes.len() as u64)
            .unwrap_or_else(|e| fatal(e));
        out
    }

    fn read(&self, t: &VkTensor) -> Vec<f32> {
        let mut rec = self.read_back(t);
        let copying = std::time::Instant::now();
        let v = rec
            .readback
            .as_ref()
            .expect("readback buffer")
            .read_f32_vec(0, t.len());
        rec.gaps.reading += copying.elapsed();
        v
    }

    fn read_with(&self, t: &VkTensor, f: &mut dyn FnMut(&[f32])) {
        // The readback buffer leaves the recorder while `f` reads it, so that `f` may use the
        // backend (a read meanwhile makes a buffer of its own) and nothing overwrites it.
        let buf = self.read_back(t).readback.take().expect("readback buffer");
        // SAFETY: `read_back` waited for the copy into `buf`, and out of the recorder nothing
        // is recorded into it while `f` reads.
        match unsafe { buf.f32_view(0, t.len()) } {
            Some(v) => f(v),
            None => f(&buf.read_f32_vec(0, t.len())),
        }
        let mut rec = self.rec();
        if rec.readback.as_ref().is_none_or(|b| b.size < buf.size) {
            rec.readback = Some(buf);
        }
    }

    fn shape(&self, t: &VkTensor) -> (usize, usize) {
        (t.rows, t.cols)
    }

    fn embed(&self, table: &VkWeight, ids: &[u32], scale: f32) -> VkTensor {
        let cols = table.cols();
        let n_rows = table.rows();
        // An id past the table would read outside it: clamp (the tokenizer never makes one).
        let ids: Vec<u32> = ids.iter().map(|&i| i.min(n_rows as u32 - 1)).collect();
        let out = self.new_tensor(ids.len(), cols);
        let ids_addr = match ids[..] {
            // One token (a decode step): in a step recorded ahead, written at its launch.
            [id] => (self.rec().upload_token(id, n_rows as u32 - 1)).unwrap_or_else(|e| fatal(e)),
            _ => self.upload(&u32s(&ids)),
        };
        let mut push = Push::new();
        push.a(table.buf.address)
            .a(ids_addr)
            .a(out.addr())
            .w(cols as u32)
            .w(table.row_bytes as u32)
            .w(ids.len() as u32)
            .f(scale);
        // get_rows.comp's SPAN columns a workgroup.
        const SPAN: usize = 256;
        self.run(
            variant("get_rows", table.ty),
            64,
            [ids.len() as u32, cols.div_ceil(SPAN) as u32, 1],
            push,
        );
        out
    }

    fn matmul(&self, w: &VkWeight, x: &VkTensor) -> VkTensor {
        self.project(w, x)
    }

    fn add_bias(&self, x: &mut VkTensor, b: &VkWeight) {
        self.settle(x);
        self.elementwise(x.addr(), b.buf.address, x.addr(), x.len(), x.cols, 3, 0.0);
    }

    fn rms_norm(&self, x: &mut VkTensor, w: &VkWeight, eps: f32) {
        self.settle(x);
        self.norm_to(x, w, eps, x.addr());
    }

    fn rms_norm_into(&self, x: &VkTensor, w: &VkWeight, eps: f32) -> VkTensor {
        self.settle(x);
        let out = self.new_tensor(x.rows, x.cols);
        let whole_rows = w.dims.iter().product::<u64>() as usize == x.cols;
        // Decode steps: norm_quant spreads a row over workgroups that each sum it whole, worth it
        // only for a few rows (and the sums agree with rms_norm's at these sizes).
        let decode = x.rows <= 4;
        match self
            .quant_target(x.rows, x.cols)
            .filter(|_| whole_rows && decode)
        {
            // The pre-norm of a block feeds its projections: quantized in the same dispatch.
            Some((mode, q, s)) => {
                // Early weights: one token's norm signals the projections that read it.
                let sync = (x.rows == 1).then(|| self.sync_begin()).flatten();
                let (slot, epoch) = sync.unwrap_or((0, 0));
                let qa = q.addr();
                let mut push = Push::new();
                push.a(x.addr())
                    .a(w.buf.address)
                    .a(out.addr())
                    .a(qa)
                    .a(s.addr())
                    .w(x.cols as u32)
                    .f(eps)
                    .w(x.rows as u32)
                    .w(mode)
                    .a(slot)
                    .w(epoch);
                let wg = self.norm_wg(x.cols, x.rows);
                let spec = [wg, self.tune.shuffle as u32, 0];
                let groups = fold(x.rows * x.cols.div_ceil(4 * wg as usize));
                // Held back until the next command: an MoE router that normalizes this norm's
                // input itself is recorded before it (`VulkanOptions::router_first`).
                if sync.is_none()
                    && self.tune.router_first
                    && self.tune.router_norm
                    && !self.ablating.load(Relaxed)
                {
                    let spec = [spec[0], spec[1], spec[2], 0, 0, 0];
                    let pipe = self
                        .ctx
                        .pipeline("norm_quant", spec)
                        .unwrap_or_else(|e| fatal(e));
                    self.rec()
                        .hold("norm_quant", pipe, &push, groups, None, false)
                        .unwrap_or_else(|e| fatal(e));
                } else {
                    self.run_spec("norm_quant", spec, groups, push);
                }
                self.sync_recorded(sync, qa, false);
                self.quant_primed(&out, mode, q, s);
                *self.last_norm.lock().unwrap_or_else(|e| e.into_inner()) = Some(NormOrigin {
                    out: out.addr(),
                    src: x.addr(),
                    w: w.buf.address,
                    eps,
                    cols: x.cols,
                    wg,
                    ops: self.rec().ops,
                });
            }
            None if whole_rows && self.norm_rounded(x, w, eps, &out) => {}
            None => self.norm_to(x, w, eps, out.addr()),
        }
        out
    }

    fn rope(&self, x: &mut VkTensor, head_dim: usize, positions: &[u32], p: &RopeParams) {
        self.settle(x);
        self.rope_pair(x, None, head_dim, positions, p);
    }

    fn rope_qk(
        &self,
        q: &mut VkTensor,
        k: &mut VkTensor,
        head_dim: usize,
        positions: &[u32],
        p: &RopeParams,
    ) {
        self.settle(q);
        self.settle(k);
        self.rope_pair(q, Some(k), head_dim, positions, p);
    }

    fn scale(&self, x: &mut VkTensor, s: f32) {
        self.settle(x);
        self.elementwise(x.addr(), x.addr(), x.addr(), x.len(), x.cols, 0, s);
    }

    fn matmul_add(&self, w: &VkWeight, x: &VkTensor, acc: &mut VkTensor) {
        self.settle(acc);
        // Decode steps fold the residual into the integer-dot mat-vec's store.
        let fits = acc.rows == x.rows && acc.cols == w.rows();
        if !(self.tune.int_dot && x.rows <= 4 && fits && self.matvecq(w, x, acc.addr(), true, None))
        {
            let y = self.project(w, x);
            self.add(acc, &y);
        }
    }

    fn matmul_add_norm(
        &self,
        w: &VkWeight,
        x: &VkTensor,
        acc: &mut VkTensor,
        norm: &VkWeight,
        eps: f32,
    ) -> VkTensor {
        self.settle(acc);
        // Decode steps on matvec_dec: the norm computed as the sums arrive (FUSE).
        let fits = acc.rows == x.rows && acc.cols == w.rows() && self.dec_kernel(w, x);
        if fits {
            let [lpr, nr, wg, _] = self.dec_shape(w);
            let wg = wg.max(lpr);
            if let Some(mut f) = self.fuse_begin(x.rows, acc.cols, norm, eps, (wg, wg / lpr * nr)) {
                // Early weights: one token's norm signals the projections that read it.
                f.sync = (x.rows == 1).then(|| self.sync_begin()).flatten();
                if self.matvecq(w, x, acc.addr(), true, Some(&f)) {
                    return self.fuse_end(f);
                }
            }
        }
        self.matmul_add(w, x, acc);
        self.rms_norm_into(acc, norm, eps)
    }

    fn add(&self, x: &mut VkTensor, y: &VkTensor) {
        self.settle(x);
        self.settle(y);
        self.elementwise(x.addr(), y.addr(), x.addr(), x.len(), x.cols, 1, 0.0);
    }

    fn gate_up_act(&self, gate: &VkWeight, up: &VkWeight, x: &VkTensor, act: GatedAct) -> VkTensor {
        let n_ff = gate.rows();
        if let Some(a) = self.glu_fused([(gate, 0), (up, 0)], n_ff, x, act, None) {
            return a;
        }
        let g = self.project(gate, x);
        let u = self.project(up, x);
        if let Some(a) = self.gated_rounded(&g, &u, act, gate.ty) {
            return a;
        }
        self.gated(&g, &u, act)
    }

    fn gated(&self, gate: &VkTensor, up: &VkTensor, act: GatedAct) -> VkTensor {
        self.settle(gate);
        self.settle(up);
        self.gated_for(gate, up, act, false)
    }

    fn kv_cache(&self, n_ctx: usize, kv_dims: &[usize]) -> VkKvCache {
        // Every buffer first, then their fills, submitted and waited for here: the cache is
        // ready when the session starts, and none of its setup (the allocations least of all)
        // rides in the first step's recording, whose device span `zinc bench` times (filling
        // between allocations, a piece went to the device while the host still allocated,
        // and a short run's span exceeded its wall time).
        let make = |d: usize| {
            self.ctx
                .buffer((n_ctx * d * 2) as u64, Memory::Device)
                .unwrap_or_else(|e| fatal(e))
        };
        let k: Vec<Buffer> = kv_dims.iter().map(|&d| make(d)).collect();
        let v: Vec<Buffer> = kv_dims.iter().map(|&d| make(d)).collect();
        let mut rec = self.rec();
        for b in k.iter().chain(&v) {
            rec.fill_zero(b.buffer, b.size).unwrap_or_else(|e| fatal(e));
        }
        rec.submit(&self.stats).unwrap_or_else(|e| fatal(e));
        drop(rec);
        VkKvCache {
            n_ctx,
            dims: kv_dims.to_vec(),
            k,
            v,
            rec: self.rec.clone(),
            stats: self.stats.clone(),
        }
    }

    fn kv_store(
        &self,
        cache: &mut VkKvCache,
        layer: usize,
        k: &VkTensor,
        v: &VkTensor,
        positions: &[u32],
    ) -> Result<(), BackendError> {
        self.settle(k);
        self.settle(v);
        fits_context(cache, positions)?;
        let d = cache.dims[layer];
        let pos = self.upload(&u32s(positions));
        // K and V in one dispatch.
        let words = k.rows * d / 2;
        let mut push = Push::new();
        push.a(k.addr())
            .a(v.addr())
            .a(cache.k[layer].address)
            .a(cache.v[layer].address)
            .a(pos)
            .w(d as u32)
            .w(k.rows as u32);
        self.run("kv_store", 256, fold(words.div_ceil(256)), push);
        Ok(())
    }

    fn qk_norm_rope_store(
        &self,
        q: &mut VkTensor,
        k: &mut VkTensor,
        v: &VkTensor,
        norms: (Option<&VkWeight>, Option<&VkWeight>),
        eps: f32,
        head_dim: usize,
        positions: &[u32],
        rope: &RopeParams,
        cache: &mut VkKvCache,
        layer: usize,
    ) -> Result<(), BackendError> {
        self.settle(q);
        self.settle(k);
        self.settle(v);
        let kv_dim = cache.dims[layer];
        let fits = prep_fits(q, k, v, norms, head_dim, positions, rope, kv_dim);
        if !fits {
            if let Some(n) = norms.0 {
                self.rms_norm(q, n, eps);
            }
            if let Some(n) = norms.1 {
                self.rms_norm(k, n, eps);
            }
            self.rope_qk(q, k, head_dim, positions, rope);
            return self.kv_store(cache, layer, k, v, positions);
        }
        fits_context(cache, positions)?;
        let pos = self.upload(&u32s(positions));
        let (nq, nk) = (q.cols / head_dim, kv_dim / head_dim);
        // One row: RoPE's cos and sin from the host (`rope_words`), as attn_dec_prep takes them.
        let table = self
            .rope_words(positions, rope, head_dim)
            .map_or(0, |t| self.upload(&u32s(&t)));
        let flags =
            norms.0.is_some() as u32 | (norms.1.is_some() as u32) << 1 | u32::from(table != 0) << 2;
        let mut push = Push::new();
        push.a(q.addr())
            .a(k.addr())
            .a(v.addr())
            .a(norms.0.map_or(0, |w| w.buf.address))
            .a(norms.1.map_or(0, |w| w.buf.address))
            .a(cache.k[layer].address)
            .a(cache.v[layer].address)
            .a(pos)
            .w(nq as u32)
            .w(nk as u32)
            .w(head_dim as u32)
            .w(rope.n_rot as u32)
            .w((rope.style == RopeStyle::Neox) as u32)
            .f(rope.freq_base)
            .f(rope.freq_scale)
            .f(eps)
            .w(q.rows as u32)
            .w(flags)
            .a(table);
        // rms_norm.comp's workgroup: the same sums.
        let wg = self.norm_wg(head_dim, q.rows);
        let items = q.rows * (nq + 2 * nk);
        let sgs = self.ctx.info.subgroup_size;
        // A prompt's rows a subgroup a head (qk_prep_rows.comp), replaying the 64-invocation
        // workgroup's sums: subgroups of 8 to 64 lanes, no host table.
        let rows = self.tune.prep_rows
            && q.rows > 4
            && table == 0
            && wg == 64
            && self.tune.shuffle
            && sgs.is_power_of_two()
            && (8..=64).contains(&sgs);
        if rows {
            self.run("qk_prep_rows", 128, fold(items.div_ceil(4)), push);
        } else {
            let spec = [wg, self.tune.shuffle as u32, 0];
            self.run_spec("qk_prep", spec, fold(items), push);
        }
        Ok(())
    }

    fn prep_attention(
        &self,
        mut q: VkTensor,
        mut k: VkTensor,
        v: &VkTensor,
        norms: (Option<&VkWeight>, Option<&VkWeight>),
        eps: f32,
        positions: &[u32],
        rope: &RopeParams,
        cache: &mut VkKvCache,
        layer: usize,
        attn: &AttnParams,
        q_scale: Option<f32>,
    ) -> Result<VkTensor, BackendError> {
        let hd = attn.head_dim;
        let kv_dim = cache.dims[layer];
        let one = positions.len() == 1
            && q.cols == attn.n_head * hd
            && kv_dim == attn.n_head_kv * hd
            && prep_fits(&q, &k, v, norms, hd, positions, rope, kv_dim);
        if self.tune.fuse_prep && one && self.attn_dec_takes(1, positions, attn) {
            fits_context(cache, positions)?;
            let prep = Prep {
                k: &k,
                v,
                norms,
                eps,
                rope,
                q_scale,
            };
            if let Some(out) = self.attn_dec(&q, cache, layer, positions, attn, Some(&prep)) {
                return Ok(out);
            }
        }
        self.qk_norm_rope_store(
            &mut q, &mut k, v, norms, eps, hd, positions, rope, cache, layer,
        )?;
        if let Some(s) = q_scale {
            self.scale(&mut q, s);
        }
        Ok(self.attention(&q, cache, layer, positions, attn))
    }

    fn attention(
        &self,
        q: &VkTensor,
        cache: &VkKvCache,
        layer: usize,
        positions: &[u32],
        p: &AttnParams,
    ) -> VkTensor {
        self.settle(q);
        let decode = self.attn_dec_takes(q.rows, positions, p);
        if decode {
            if let Some(out) = self.attn_dec(q, cache, layer, positions, p, None) {
                return out;
            }
        }
        let out = self.new_tensor(q.rows, p.n_head * p.head_dim);
        let pos = self.upload(&u32s(positions));
        let (max_pos, keys) = attn_keys(positions, p);
        let window = p.window.unwrap_or(0) as u32;
        let split_len = keys.div_ceil(MAX_SPLITS).next_multiple_of(SPLIT_LEN);
        // Addresses come first in every push-constant block: attn_split adds `part` after `pos`
        // and `split_len` after the scalars.
        let push = |part: Option<u64>| {
            let mut pc = Push::new();
            pc.a(q.addr())
                .a(cache.k[layer].address)
                .a(cache.v[layer].address)
                .a(out.addr())
                .a(pos);
            if let Some(a) = part {
                pc = pc.addr(a);
            }
            let pc = pc
                .u32(p.n_head as u32)
                .u32(p.n_head_kv as u32)
                .u32(p.head_dim as u32)
                .u32(q.rows as u32)
                .f32(p.scale)
                .u32(window)
                .u32((max_pos + 1) as u32);
            match part {
                Some(_) => pc.u32(split_len as u32),
                None => pc,
            }
        };
        if decode {
            // Shapes attn_dec does not take: split keys, merged by attn_combine.
            let nsplit = keys.div_ceil(split_len);
            let part = self.new_tensor(p.n_head * nsplit, p.head_dim + 2);
            let push = push(Some(part.addr()));
            self.run("attn_split", 64, [p.n_head as u32, 1, nsplit as u32], push);
            self.attn_combine(&part, &out, p, nsplit);
        } else if let Some(name) = self.attn_fa_variant(q.rows, p.head_dim) {
            // Prompts on cooperative matrices: 64 rows of a head a workgroup.
            let g = [p.n_head as u32, q.rows.div_ceil(64) as u32, 1];
            self.run(name, 128, g, push(None));
        } else {
            // 64 rows or more: four rows a workgroup (attention.comp's prompt path).
            let ry = if q.rows < 64 {
                q.rows
            } else {
                q.rows.div_ceil(4)
            };
            self.run("attention", 64, [p.n_head as u32, ry as u32, 1], push(None));
        }
        out
    }

    fn moe_ffn(&self, x: &VkTensor, w: &MoeWeights<'_, VkWeight>) -> VkTensor {
        let out = self.new_tensor(x.rows, w.down.rows());
        self.moe(x, w, &out, false, None);
        out
    }

    fn moe_ffn_add(&self, x: &VkTensor, w: &MoeWeights<'_, VkWeight>, acc: &mut VkTensor) {
        self.settle(acc);
        if acc.rows == x.rows && acc.cols == w.down.rows() {
            self.moe(x, w, acc, true, None);
        } else {
            let y = self.moe_ffn(x, w);
            self.add(acc, &y);
        }
    }

    fn moe_ffn_add_norm(
        &self,
        x: &VkTensor,
        w: &MoeWeights<'_, VkWeight>,
        acc: &mut VkTensor,
        norm: &VkWeight,
        eps: f32,
    ) -> VkTensor {
        self.settle(acc);
        if acc.rows == x.rows && acc.cols == w.down.rows() {
            if let Some(h) = self.moe(x, w, acc, true, Some((norm, eps))) {
                return h;
            }
        } else {
            let y = self.moe_ffn(x, w);
            self.add(acc, &y);
        }
        self.rms_norm_into(acc, norm, eps)
    }

    fn select_rows(&self, x: &VkTensor, rows: &[usize]) -> VkTensor {
        self.settle(x);
        self.gather(x, 0, x.cols, Some(rows))
    }

    fn softcap(&self, x: &mut VkTensor, cap: f32) {
        self.settle(x);
        self.elementwise(x.addr(), x.addr(), x.addr(), x.len(), x.cols, 2, cap);
    }

    fn argmax(&self, x: &VkTensor) -> Vec<u32> {
        let out = self.argmax_on_device(x);
        self.read(&out).into_iter().map(f32::to_bits).collect()
    }

    fn argmax_tensor(&self, x: &VkTensor) -> Option<VkTensor> {
        Some(self.argmax_on_device(x))
    }

    fn ahead_begin(&self, prev: &VkTensor) -> bool {
        if !self.ahead_allowed(&self.rec()) {
            return false;
        }
        let (mut rec, _) = self.copy_for_host(prev);
        rec.ahead_begin().unwrap_or_else(|e| fatal(e));
        true
    }

    fn ahead_end(&self, out: Option<&VkTensor>) -> Option<u64> {
        let Some(t) = out else {
            self.rec().ahead_abort();
            return None;
        };
        {
            // Its copy goes where the step before's is, which the host has yet to read.
            let mut rec = self.rec();
            let bytes = (t.len() * 4) as u64;
            if rec.readback.as_ref().is_none_or(|b| b.size < bytes) {
                rec.ahead_abort();
                return None;
            }
        }
        let (mut rec, _) = self.copy_for_host(t);
        let rb = rec
            .readback
            .as_ref()
            .map(|b| b.buffer)
            .expect("readback buffer");
        (rec.ahead_end(t.buffer().address, rb)).unwrap_or_else(|e| fatal(e))
    }

    fn ahead_launch(&self, ticket: u64, id: u32) -> bool {
        let mut rec = self.rec();
        if !self.ahead_allowed(&rec) {
            // (An ablation or the clock began after it was recorded.)
            rec.ahead_cancel(ticket);
            return false;
        }
        (rec.ahead_launch(ticket, id)).unwrap_or_else(|e| fatal(e))
    }

    fn ahead_cancel(&self, ticket: u64) {
        self.rec().ahead_cancel(ticket);
    }
}
