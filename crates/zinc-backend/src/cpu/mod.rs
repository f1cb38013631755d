//! The CPU backend: weights read in place from the mapped GGUF, ops run at once on all cores
//! (rayon). Matmul kernels are compiled twice, for the baseline target and with AVX2/FMA, and the
//! faster is picked at run time.

#[cfg(target_arch = "x86_64")]
mod avx2;

pub(crate) mod dot;

use std::sync::Arc;

use half::f16;
use rayon::prelude::*;
use zinc_gguf::{GgmlType, GgufModel};

use crate::{
    AttnParams, Backend, BackendError, GateUp, GatedAct, MoeWeights, RopeParams, RopeStyle,
};
use dot::{act_kind, quantize_act, ActRow};

/// A weight: a tensor of the mapped model, read in place.
pub struct CpuWeight {
    model: Arc<GgufModel>,
    index: usize,
    ty: GgmlType,
    dims: Vec<u64>,
}

impl CpuWeight {
    fn data(&self) -> &[u8] {
        self.model
            .tensor_by_index(self.index)
            .map(|t| t.data)
            .unwrap_or_default()
    }

    /// Elements per row (`dims[0]`).
    fn cols(&self) -> usize {
        self.dims.first().copied().unwrap_or(1) as usize
    }

    fn row_bytes(&self) -> usize {
        self.ty.row_bytes(self.cols() as u64).unwrap_or(0) as usize
    }

    /// The weight as f32 (for 1-D weights: norms, biases).
    fn to_f32(&self) -> Vec<f32> {
        let n = self.dims.iter().product::<u64>() as usize;
        zinc_quant::dequantize_to_vec(self.ty, self.data(), n).unwrap_or_default()
    }
}

/// Activations: `rows × cols` f32, row-major.
#[derive(Clone, Debug)]
pub struct CpuTensor {
    pub data: Vec<f32>,
    pub rows: usize,
    pub cols: usize,
}

impl CpuTensor {
    fn row(&self, r: usize) -> &[f32] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
}

/// K and V per layer, as f16 (llama.cpp's default cache type), `n_ctx × kv_dim` each.
pub struct CpuKvCache {
    n_ctx: usize,
    dims: Vec<usize>,
    k: Vec<Vec<f16>>,
    v: Vec<Vec<f16>>,
}

#[derive(Default)]
pub struct CpuBackend {
    _private: (),
}

impl CpuBackend {
    pub fn new() -> CpuBackend {
        CpuBackend { _private: () }
    }
}

/// `out[t][r] = w[r] · x[t]` for rows `r0..r0 + out_t.len() / n_tok` written transposed
/// (`out_t[r][t]`), one call per parallel chunk.
#[inline(always)]
fn matmul_chunk(
    ty: GgmlType,
    data: &[u8],
    row_bytes: usize,
    r0: usize,
    acts: &[ActRow],
    out_t: &mut [f32],
) {
    let n_tok = acts.len();
    let mut u = dot::Unpacked::new();
    for (i, out_row) in out_t.chunks_exact_mut(n_tok).enumerate() {
        let r = r0 + i;
        dot::unpack(ty, &data[r * row_bytes..(r + 1) * row_bytes], &mut u);
        for (o, a) in out_row.iter_mut().zip(acts) {
            *o = dot::dot_unpacked(&u, a);
        }
    }
}

/// As `matmul_chunk`, with the AVX2 kernels where a format has one. Tokens go in tiles of 16 so
/// the tile's activations stay in L1 while the chunk's weight rows stream from L2; within a tile,
/// groups of 8 (or 4) tokens share each unpacked weight block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c,bmi2")]
unsafe fn matmul_chunk_avx2(
    ty: GgmlType,
    data: &[u8],
    row_bytes: usize,
    r0: usize,
    acts: &[ActRow],
    groups: &[avx2::Group],
    out_t: &mut [f32],
) {
    if !avx2::has_kernel(ty) {
        return matmul_chunk(ty, data, row_bytes, r0, acts, out_t);
    }
    let n_tok = acts.len();
    let n_rows = out_t.len() / n_tok;
    for t0 in (0..n_tok).step_by(16) {
        let t1 = (t0 + 16).min(n_tok);
        for i in 0..n_rows {
            let r = r0 + i;
            let row = &data[r * row_bytes..(r + 1) * row_bytes];
            let mut t = t0;
            if !groups.is_empty() {
                while t + 8 <= t1 {
                    let v = avx2::dot8(ty, row, &groups[t / 8]);
                    out_t[i * n_tok + t..i * n_tok + t + 8].copy_from_slice(&v);
                    t += 8;
                }
            }
            while t + 4 <= t1 {
                let v = avx2::dot4(
                    ty,
                    row,
                    [&acts[t], &acts[t + 1], &acts[t + 2], &acts[t + 3]],
                );
                out_t[i * n_tok + t..i * n_tok + t + 4].copy_from_slice(&v);
                t += 4;
            }
            for t in t..t1 {
                out_t[i * n_tok + t] = avx2::dot(ty, row, &acts[t]);
            }
        }
    }
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX2.get_or_init(|| {
            is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
                && is_x86_feature_detected!("f16c")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `y[t] = W x[t]` over a weight given as raw rows (a whole tensor or one expert's slice).
fn matmul_raw(ty: GgmlType, data: &[u8], rows: usize, cols: usize, x: &CpuTensor) -> CpuTensor {
    let kind = act_kind(ty).expect("weights of unsupported types are refused at load");
    let acts: Vec<ActRow> = (0..x.rows)
        .into_par_iter()
        .map(|t| quantize_act(kind, x.row(t)))
        .collect();
    // For the 8-token kernels: each full group of eight Q8 rows, interleaved per block.
    #[cfg(target_arch = "x86_64")]
    let groups: Vec<avx2::Group> = if has_avx2() && avx2::has_kernel(ty) {
        acts.par_chunks_exact(8)
            .filter_map(|g| avx2::Group::new(std::array::from_fn(|k| &g[k])))
            .collect()
    } else {
        Vec::new()
    };
    let row_bytes = ty.row_bytes(cols as u64).unwrap_or(0) as usize;
    let n_tok = x.rows;
    if n_tok == 0 || rows == 0 {
        return CpuTensor {
            data: Vec::new(),
            rows: n_tok,
            cols: rows,
        };
    }
    let mut out_t = vec![0.0f32; rows * n_tok];
    // Enough rows per task to amortise scheduling, few enough to balance 2..64 cores.
    let chunk_rows = (rows / (rayon::current_num_threads() * 8)).clamp(1, 64);
    let avx2 = has_avx2();
    out_t
        .par_chunks_mut(chunk_rows * n_tok)
        .enumerate()
        .for_each(|(c, chunk)| {
            let r0 = c * chunk_rows;
            #[cfg(target_arch = "x86_64")]
            if avx2 {
                // SAFETY: the CPU has AVX2, FMA and F16C (checked at run time just above).
                unsafe { matmul_chunk_avx2(ty, data, row_bytes, r0, &acts, &groups, chunk) };
                return;
            }
            let _ = avx2;
            matmul_chunk(ty, data, row_bytes, r0, &acts, chunk);
        });
    let mut out = vec![0.0f32; n_tok * rows];
    out.par_chunks_mut(rows).enumerate().for_each(|(t, o)| {
        for (r, v) in o.iter_mut().enumerate() {
            *v = out_t[r * n_tok + t];
        }
    });
    CpuTensor {
        data: out,
        rows: n_tok,
        cols: rows,
    }
}

/// RMSNorm of `x` in place, with the sum of squares in f64 as ggml does.
fn rms_norm_in_place(x: &mut [f32], w: &[f32], eps: f32) {
    let sum: f64 = x.iter().map(|&v| (v * v) as f64).sum();
    let mean = (sum / x.len() as f64) as f32;
    let scale = 1.0 / (mean + eps).sqrt();
    for (v, &g) in x.iter_mut().zip(w) {
        *v = (*v * scale) * g;
    }
}

/// One query row of one head against the cache.
struct AttnRow<'a> {
    q: &'a [f32],
    /// First and last cached position attended.
    lo: usize,
    pos: usize,
    /// Offset of the KV head within a cached row, and the row width.
    at: usize,
    kv_dim: usize,
    scale: f32,
}

/// The attention of one row (see `Backend::attention` for the two paths): `kf`/`vf` are the
/// widened cache for the tiled path, `kc`/`vc` the f16 cache for the per-row path.
#[inline(always)]
fn attend_row(
    j: &AttnRow,
    tiled: bool,
    kf: &[f32],
    vf: &[f32],
    kc: &[f16],
    vc: &[f16],
    o: &mut [f32],
) {
    use half::slice::HalfFloatSliceExt;
    let hd = j.q.len();
    let span = |c: usize| c * j.kv_dim + j.at..c * j.kv_dim + j.at + hd;
    if tiled {
        let mut scores = Vec::with_capacity(j.pos + 1 - j.lo);
        let mut max = f32::NEG_INFINITY;
        for c in j.lo..=j.pos {
            let s = dot_f32(j.q, &kf[span(c)]) * j.scale;
            max = max.max(s);
            scores.push(s);
        }
        let mut sum = 0.0f32;
        for s in &mut scores {
            *s = (*s - max).exp();
            sum += *s;
        }
        let inv = 1.0 / sum;
        for (c, &w) in (j.lo..=j.pos).zip(&scores) {
            let w = w * inv;
            for (ov, vv) in o.iter_mut().zip(&vf[span(c)]) {
                *ov += w * vv;
            }
        }
    } else {
        let mut row = vec![0.0f32; hd];
        let q16: Vec<f32> = j.q.iter().map(|&v| f16::from_f32(v).to_f32()).collect();
        let mut acc = vec![0.0f32; hd]; // holds f16 values
        let (mut m, mut sum) = (f32::NEG_INFINITY, 0.0f32);
        for c in j.lo..=j.pos {
            kc[span(c)].convert_to_f32_slice(&mut row);
            let s = dot_f32(&q16, &row) * j.scale;
            let (mut ms, mut vs) = (1.0f32, 1.0f32);
            if s > m {
                ms = (m - s).exp();
                m = s;
                for a in acc.iter_mut() {
                    *a = f16::from_f32(*a * ms).to_f32();
                }
            } else {
                vs = (s - m).exp();
            }
            vc[span(c)].convert_to_f32_slice(&mut row);
            for (a, &v) in acc.iter_mut().zip(&row) {
                *a = f16::from_f32(v.mul_add(vs, *a)).to_f32();
            }
            sum = sum * ms + vs;
        }
        let inv = if sum == 0.0 { 0.0 } else { 1.0 / sum };
        for (ov, a) in o.iter_mut().zip(&acc) {
            *ov = a * inv;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn attend_row_avx2(
    j: &AttnRow,
    tiled: bool,
    kf: &[f32],
    vf: &[f32],
    kc: &[f16],
    vc: &[f16],
    o: &mut [f32],
) {
    attend_row(j, tiled, kf, vf, kc, vc, o)
}

/// Dot product with eight partial sums, so the loop vectorizes.
#[inline(always)]
fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[inline]
fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// GELU (tanh form) of every f16 value, rounded to f16: ggml's table, built once.
/// GELU of every f16 value (indexed by its bits), rounded to f16: ggml's CPU table. Public so
/// GPU backends can use the same values.
pub fn gelu_f16_table() -> &'static [f32] {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        const SQRT_2_OVER_PI: f32 = 0.797_884_6;
        const GELU_COEF_A: f32 = 0.044715;
        (0..=u16::MAX)
            .map(|bits| {
                let h = f16::from_bits(bits).to_f32();
                let g = 0.5 * h * (1.0 + (SQRT_2_OVER_PI * h * (1.0 + GELU_COEF_A * h * h)).tanh());
                f16::from_f32(g).to_f32()
            })
            .collect()
    })
}

/// GELU as ggml's CPU backend computes it: through the f16 table for |x| < 10.
#[inline]
fn gelu_table(x: f32, table: &[f32]) -> f32 {
    if x <= -10.0 {
        0.0
    } else if x >= 10.0 {
        x
    } else {
        table[f16::from_f32(x).to_bits() as usize]
    }
}

impl Backend for CpuBackend {
    type Weight = CpuWeight;
    type Tensor = CpuTensor;
    type KvCache = CpuKvCache;

    fn name(&self) -> String {
        format!(
            "cpu ({} threads{})",
            rayon::current_num_threads(),
            if has_avx2() { ", AVX2" } else { "" }
        )
    }

    fn supports(&self, ty: GgmlType) -> bool {
        act_kind(ty).is_some()
    }

    fn weight(&self, model: &Arc<GgufModel>, name: &str) -> Result<CpuWeight, BackendError> {
        let (index, t) = crate::find_weight(self, "cpu", model, name)?;
        Ok(CpuWeight {
            model: model.clone(),
            index,
            ty: t.info.ty,
            dims: t.info.dims.clone(),
        })
    }

    fn weight_dims<'w>(&self, w: &'w CpuWeight) -> &'w [u64] {
        &w.dims
    }

    fn weight_values(&self, w: &CpuWeight) -> Vec<f32> {
        w.to_f32()
    }

    fn copy(&self, t: &CpuTensor) -> CpuTensor {
        t.clone()
    }

    fn split_cols(&self, t: &CpuTensor, widths: &[usize]) -> Vec<CpuTensor> {
        let mut out: Vec<CpuTensor> = widths
            .iter()
            .map(|&w| CpuTensor {
                data: Vec::with_capacity(t.rows * w),
                rows: t.rows,
                cols: w,
            })
            .collect();
        for r in 0..t.rows {
            let mut at = 0;
            for (o, &w) in out.iter_mut().zip(widths) {
                o.data.extend_from_slice(&t.row(r)[at..at + w]);
                at += w;
            }
        }
        out
    }

    fn tensor(&self, rows: usize, cols: usize) -> CpuTensor {
        CpuTensor {
            data: vec![0.0; rows * cols],
            rows,
            cols,
        }
    }

    fn tensor_from(&self, data: &[f32], rows: usize, cols: usize) -> CpuTensor {
        assert_eq!(
            data.len(),
            rows * cols,
            "tensor_from: {} values for {rows}×{cols}",
            data.len()
        );
        CpuTensor {
            data: data.to_vec(),
            rows,
            cols,
        }
    }

    fn read(&self, t: &CpuTensor) -> Vec<f32> {
        t.data.clone()
    }

    fn shape(&self, t: &CpuTensor) -> (usize, usize) {
        (t.rows, t.cols)
    }

    fn embed(&self, table: &CpuWeight, ids: &[u32], scale: f32) -> CpuTensor {
        let cols = table.cols();
        let rb = table.row_bytes();
        let data = table.data();
        let mut out = vec![0.0f32; ids.len() * cols];
        for (&id, o) in ids.iter().zip(out.chunks_exact_mut(cols)) {
            let row = &data[id as usize * rb..(id as usize + 1) * rb];
            if zinc_quant::dequantize(table.ty, row, o).is_ok() && scale != 1.0 {
                for v in o.iter_mut() {
                    *v *= scale;
                }
            }
        }
        CpuTensor {
            data: out,
            rows: ids.len(),
            cols,
        }
    }

    fn matmul(&self, w: &CpuWeight, x: &CpuTensor) -> CpuTensor {
        let rows = w.dims.get(1).copied().unwrap_or(1) as usize;
        matmul_raw(w.ty, w.data(), rows, w.cols(), x)
    }

    fn add_bias(&self, x: &mut CpuTensor, b: &CpuWeight) {
        let bias = b.to_f32();
        for row in x.data.chunks_exact_mut(x.cols) {
            for (v, &bv) in row.iter_mut().zip(&bias) {
                *v += bv;
            }
        }
    }

    fn rms_norm(&self, x: &mut CpuTensor, w: &CpuWeight, eps: f32) {
        let g = w.to_f32();
        let n = g.len().max(1);
        x.data
            .par_chunks_mut(n)
            .for_each(|group| rms_norm_in_place(group, &g, eps));
    }

    fn rope(&self, x: &mut CpuTensor, head_dim: usize, positions: &[u32], p: &RopeParams) {
        let n_rot = p.n_rot.min(head_dim);
        let cols = x.cols;
        x.data
            .par_chunks_mut(cols)
            .zip(positions.par_iter())
            .for_each(|(row, &pos)| {
                let cs = p.cos_sin(pos, head_dim);
                for head in row.chunks_exact_mut(head_dim) {
                    for (i, &(c, s)) in cs.iter().enumerate() {
                        let (a, b) = match p.style {
                            RopeStyle::Norm => (2 * i, 2 * i + 1),
                            RopeStyle::Neox => (i, i + n_rot / 2),
                        };
                        let (x0, x1) = (head[a], head[b]);
                        head[a] = x0 * c - x1 * s;
                        head[b] = x0 * s + x1 * c;
                    }
                }
            });
    }

    fn scale(&self, x: &mut CpuTensor, s: f32) {
        for v in &mut x.data {
            *v *= s;
        }
    }

    fn add(&self, x: &mut CpuTensor, y: &CpuTensor) {
        for (a, b) in x.data.iter_mut().zip(&y.data) {
            *a += b;
        }
    }

    fn gated(&self, gate: &CpuTensor, up: &CpuTensor, act: GatedAct) -> CpuTensor {
        let table = gelu_f16_table();
        let data = gate
            .data
            .par_iter()
            .zip(up.data.par_iter())
            .map(|(&g, &u)| match act {
                GatedAct::SwiGlu => silu(g) * u,
                GatedAct::GeGlu => gelu_table(g, table) * u,
            })
            .collect();
        CpuTensor {
            data,
            rows: gate.rows,
            cols: gate.cols,
        }
    }

    fn kv_cache(&self, n_ctx: usize, kv_dims: &[usize]) -> CpuKvCache {
        CpuKvCache {
            n_ctx,
            dims: kv_dims.to_vec(),
            k: kv_dims
                .iter()
                .map(|&d| vec![f16::ZERO; n_ctx * d])
                .collect(),
            v: kv_dims
                .iter()
                .map(|&d| vec![f16::ZERO; n_ctx * d])
                .collect(),
        }
    }

    fn kv_store(
        &self,
        cache: &mut CpuKvCache,
        layer: usize,
        k: &CpuTensor,
        v: &CpuTensor,
        positions: &[u32],
    ) -> Result<(), BackendError> {
        let d = cache.dims[layer];
        for (t, &pos) in positions.iter().enumerate() {
            let pos = pos as usize;
            if pos >= cache.n_ctx {
                return Err(BackendError::ContextOverflow {
                    pos,
                    n_ctx: cache.n_ctx,
                });
            }
            for (dst, &src) in cache.k[layer][pos * d..(pos + 1) * d]
                .iter_mut()
                .zip(k.row(t))
            {
                *dst = f16::from_f32(src);
            }
            for (dst, &src) in cache.v[layer][pos * d..(pos + 1) * d]
                .iter_mut()
                .zip(v.row(t))
            {
                *dst = f16::from_f32(src);
            }
        }
        Ok(())
    }

    /// Attention as llama.cpp's CPU flash-attention computes it, so greedy outputs agree: batches
    /// of 64 or more query rows take the tiled path (f32 throughout); smaller batches and single
    /// tokens take the per-row path, where Q is rounded to f16 and the weighted sum of V is
    /// accumulated in f16 under an online softmax.
    fn attention(
        &self,
        q: &CpuTensor,
        cache: &CpuKvCache,
        layer: usize,
        positions: &[u32],
        p: &AttnParams,
    ) -> CpuTensor {
        use half::slice::HalfFloatSliceExt;
        const TILE_ROWS: usize = 64;
        let tiled = q.rows >= TILE_ROWS;
        let hd = p.head_dim;
        let kv_dim = cache.dims[layer];
        let group = p.n_head / p.n_head_kv.max(1);
        let (kc, vc) = (&cache.k[layer], &cache.v[layer]);
        // The tiled path reads every cached row many times: widen the used part of K and V once.
        let (kf, vf) = if tiled {
            let end = (positions.iter().copied().max().unwrap_or(0) as usize + 1) * kv_dim;
            let widen = |c: &[f16]| {
                let mut v = vec![0.0f32; end];
                v.par_chunks_mut(kv_dim)
                    .zip(c[..end].par_chunks(kv_dim))
                    .for_each(|(d, s)| s.convert_to_f32_slice(d));
                v
            };
            (widen(kc), widen(vc))
        } else {
            (Vec::new(), Vec::new())
        };
        let mut out = vec![0.0f32; q.rows * p.n_head * hd];
        let avx2 = has_avx2();
        out.par_chunks_mut(hd).enumerate().for_each(|(i, o)| {
            let (t, h) = (i / p.n_head, i % p.n_head);
            let pos = positions[t] as usize;
            let job = AttnRow {
                q: &q.row(t)[h * hd..(h + 1) * hd],
                lo: p.window.map_or(0, |w| (pos + 1).saturating_sub(w)),
                pos,
                at: (h / group) * hd,
                kv_dim,
                scale: p.scale,
            };
            #[cfg(target_arch = "x86_64")]
            if avx2 {
                // SAFETY: the CPU has AVX2, FMA and F16C (checked at run time).
                unsafe { attend_row_avx2(&job, tiled, &kf, &vf, kc, vc, o) };
                return;
            }
            let _ = avx2;
            attend_row(&job, tiled, &kf, &vf, kc, vc, o);
        });
        CpuTensor {
            data: out,
            rows: q.rows,
            cols: p.n_head * hd,
        }
    }

    fn moe_ffn(&self, x: &CpuTensor, w: &MoeWeights<'_, CpuWeight>) -> CpuTensor {
        let logits = self.matmul(w.router, x);
        let n_exp = logits.cols;
        let n_embd = x.cols;
        let mut out = vec![0.0f32; x.rows * n_embd];
        fn expert(w: &CpuWeight, e: usize) -> (&[u8], usize, usize) {
            let rows = w.dims[1] as usize;
            let per = rows * w.row_bytes();
            (&w.data()[e * per..(e + 1) * per], rows, w.cols())
        }
        let project = |wt: &CpuWeight, e: usize, x: &CpuTensor, scale: Option<&[f32]>| {
            let (d, r, c) = expert(wt, e);
            let mut y = matmul_raw(wt.ty, d, r, c, x);
            if let Some(s) = scale.and_then(|s| s.get(e)) {
                self.scale(&mut y, *s);
            }
            y
        };
        for t in 0..x.rows {
            // Softmax over all experts, then the top k (ties: lower index), renormalised.
            let l = logits.row(t);
            let max = l.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let mut probs: Vec<f32> = l.iter().map(|&v| (v - max).exp()).collect();
            let sum: f32 = probs.iter().sum();
            for p in &mut probs {
                *p /= sum;
            }
            let mut order: Vec<usize> = (0..n_exp).collect();
            order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
            let sel = &order[..w.k.min(n_exp)];
            let mut wts: Vec<f32> = sel.iter().map(|&e| probs[e]).collect();
            if w.renorm {
                let s: f32 = wts.iter().sum::<f32>().max(6.103_515_6e-5);
                for v in &mut wts {
                    *v /= s;
                }
            }
            let xt = CpuTensor {
                data: x.row(t).to_vec(),
                rows: 1,
                cols: n_embd,
            };
            for (&e, &we) in sel.iter().zip(&wts) {
                let (g, u) = match &w.gate_up {
                    GateUp::Separate { gate, up } => (
                        project(gate, e, &xt, w.scales[0]),
                        project(up, e, &xt, w.scales[1]),
                    ),
                    GateUp::Fused(gu) => {
                        let both = project(gu, e, &xt, None);
                        let n_ff = both.cols / 2;
                        let mut parts = self.split_cols(&both, &[n_ff, n_ff]);
                        let (mut u, mut g) = (
                            parts.pop().expect("two parts"),
                            parts.pop().expect("two parts"),
                        );
                        if let Some(s) = w.scales[0].and_then(|s| s.get(e)) {
                            self.scale(&mut g, *s);
                        }
                        if let Some(s) = w.scales[1].and_then(|s| s.get(e)) {
                            self.scale(&mut u, *s);
                        }
                        (g, u)
                    }
                };
                let a = self.gated(&g, &u, w.act);
                let y = project(w.down, e, &a, w.scales[2]);
                for (o, v) in out[t * n_embd..(t + 1) * n_embd].iter_mut().zip(&y.data) {
                    *o += we * v;
                }
            }
        }
        CpuTensor {
            data: out,
            rows: x.rows,
            cols: n_embd,
        }
    }

    fn select_rows(&self, x: &CpuTensor, rows: &[usize]) -> CpuTensor {
        let mut data = Vec::with_capacity(rows.len() * x.cols);
        for &r in rows {
            data.extend_from_slice(x.row(r));
        }
        CpuTensor {
            data,
            rows: rows.len(),
            cols: x.cols,
        }
    }

    fn softcap(&self, x: &mut CpuTensor, cap: f32) {
        for v in &mut x.data {
            *v = cap * (*v / cap).tanh();
        }
    }

    fn argmax(&self, x: &CpuTensor) -> Vec<u32> {
        (0..x.rows)
            .map(|r| {
                let mut best = 0usize;
                for (i, &v) in x.row(r).iter().enumerate() {
                    if v > x.row(r)[best] {
                        best = i;
                    }
                }
                best as u32
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
