//! The conformance suite: one body per op, run on any backend and compared with reference math
//! (weights dequantized by `zinc_quant`, sums in f64). `cargo test` runs it on the CPU and on
//! Vulkan (lavapipe in CI); `zinc selftest --backend vulkan` runs it from the release binary on
//! a real GPU.
//!
//! Sizes are chosen to be awkward: rows that are not a multiple of any workgroup, odd head
//! counts, token counts on both sides of the mat-vec/mat-mul switch, a 1-D grid past 65,535
//! workgroups, contexts short and long enough for split-K attention.
//!
//! Bounds: a mat-mul output may differ from the reference by `tol.matmul · ‖w_r‖·‖x_t‖`. The
//! reference multiplies the dequantized weights by the activations as every backend must see
//! them: rounded to the weight format's partner (Q8_0, Q8_1, Q8_K, f16, bf16), as llama.cpp's
//! `vec_dot` does — that rounding is part of the op's definition, not an error.

use std::path::PathBuf;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use zinc_gguf::{GgmlType, GgufModel, GgufWriter};

use crate::{AttnParams, Backend, GateUp, GatedAct, MoeWeights, RopeParams, RopeStyle};

/// How far a backend may be from the reference, per kind of op.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Relative to `‖w_r‖·‖x_t‖`.
    pub matmul: f64,
    /// Relative to the largest |V| (attention outputs are convex mixes of V rows).
    pub attention: f64,
    /// Relative to `max(1, |ref|)` for element-wise math (exp, tanh, rsqrt, sin/cos).
    pub elementwise: f64,
}

impl Tolerance {
    /// Backends whose attention is f32 math over the f16 cache.
    pub fn exact_f32() -> Tolerance {
        Tolerance {
            matmul: 1e-3,
            attention: 1e-3,
            elementwise: 1e-4,
        }
    }

    /// The CPU backend: Q rounded to f16 with f16 V accumulation in short attention (llama.cpp's
    /// CPU flash attention).
    pub fn q8_activations() -> Tolerance {
        Tolerance {
            matmul: 1e-3,
            attention: 5e-3,
            elementwise: 1e-4,
        }
    }
}

/// One case's outcome.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    /// The largest error as a fraction of its bound (≤ 1 passes).
    pub worst: f64,
    pub ok: bool,
    pub detail: String,
}

/// The weight formats exercised: all of them.
pub const FORMATS: &[GgmlType] = crate::WEIGHT_FORMATS;

const MM_ROWS: usize = 37;
const FOLD_ROWS: usize = 70_001;
/// Rows of the wide prompt-sized mat-mul cases.
const WIDE_ROWS: usize = 2048;
/// Rows of nine 256-element blocks, for mat-vecs whose lanes take a row's blocks in passes (an
/// odd count ends part-way through a pass); F32 rows this long take Vulkan's float mat-vec
/// through its batches of eight vectors a lane in flight and then a remainder (an MoE router's
/// path).
const LONG_COLS: usize = 2304;
const LONG_FORMATS: [GgmlType; 4] = [
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::F32,
];
/// Square K-quant weights whose outputs are whole 256-blocks (a residual a norm reads).
const SQ: usize = 512;
/// Rows of the gated FFN's K-quant gate and up (three 256-row blocks: `gate_up_act`'s fused
/// decode form counts each block's rows of both).
const GLU_FF: usize = 768;
const N_EMBD: usize = 64;
const N_FF: usize = 96;
// More than moe_route.comp's 64 invocations a token (two experts an invocation), and not a
// multiple of 16 (route.glsl's small ranking reads keys sixteen at a time, the rest −inf).
const N_EXPERT: usize = 84;
// Past route.glsl's RT_SMALL (128), and not a multiple of 8: its general ranking (counts eight
// keys at a time, then the rest) rather than the small one's vectors.
const N_EXPERT_WIDE: usize = 140;
/// Width of the K-quant MoE layer (rows of whole 256-blocks: the decode kernels' fused forms).
const KM: usize = 256;
const KM_EXPERTS: usize = 12;

fn mm_cols(ty: GgmlType) -> usize {
    match ty.block_size() {
        256 => 512,
        32 => 160,
        _ => 100,
    }
}

fn randn(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            // Box–Muller: Gaussian values, so quantizers see realistic blocks.
            let u: f64 = rng.gen_range(1e-9..1.0);
            let v: f64 = rng.gen();
            ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
        })
        .collect()
}

/// The suite's weights, written once to a temporary GGUF and mapped.
struct Fixture {
    model: Arc<GgufModel>,
    path: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn fixture(seed: u64) -> Result<Fixture, String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut w = GgufWriter::new();
    let e = |e: zinc_gguf::GgufError| e.to_string();
    for &ty in FORMATS {
        let cols = mm_cols(ty);
        let v = randn(&mut rng, cols * MM_ROWS);
        w.add_f32_tensor(
            &format!("mm.{}", ty.name()),
            ty,
            &[cols as u64, MM_ROWS as u64],
            &v,
        )
        .map_err(e)?;
    }
    let v = randn(&mut rng, 32 * FOLD_ROWS);
    w.add_f32_tensor("fold", GgmlType::Q8_0, &[32, FOLD_ROWS as u64], &v)
        .map_err(e)?;
    // Weights of one shape each, as (name prefix, format, cols, rows).
    use GgmlType as T;
    let shaped = [
        ("wide", T::F32, 32, WIDE_ROWS),
        ("wide", T::Q8_0, 32, WIDE_ROWS),
        ("sq", T::Q4_K, SQ, SQ),
        ("sq", T::Q6_K, SQ, SQ),
        ("glu.gate", T::Q4_K, SQ, GLU_FF),
        ("glu.up", T::Q4_K, SQ, GLU_FF),
        ("glu.gate", T::Q6_K, SQ, GLU_FF),
        ("glu.up", T::Q6_K, SQ, GLU_FF),
        ("glu.down", T::Q4_K, GLU_FF, MM_ROWS),
    ]
    .into_iter()
    .chain(LONG_FORMATS.map(|ty| ("long", ty, LONG_COLS, MM_ROWS)));
    for (prefix, ty, cols, rows) in shaped {
        let v = randn(&mut rng, cols * rows);
        let name = format!("{prefix}.{}", ty.name());
        w.add_f32_tensor(&name, ty, &[cols as u64, rows as u64], &v)
            .map_err(e)?;
    }
    for (name, n) in [("norm.row", 1000), ("norm.head", 32), ("bias", 100)] {
        let v: Vec<f32> = randn(&mut rng, n).iter().map(|x| 1.0 + 0.3 * x).collect();
        w.add_f32_tensor(name, GgmlType::F32, &[n as u64], &v)
            .map_err(e)?;
    }
    // Two expert sets: "moe" (N_EXPERT, also a fused gate/up) and "moew" (N_EXPERT_WIDE).
    for (p, ne) in [("moe", N_EXPERT), ("moew", N_EXPERT_WIDE)] {
        let router = randn(&mut rng, N_EMBD * ne);
        w.add_f32_tensor(
            &format!("{p}.router"),
            GgmlType::F32,
            &[N_EMBD as u64, ne as u64],
            &router,
        )
        .map_err(e)?;
        // The same router with experts 2i and 2i + 1 identical: every logit ties with another
        // (the routing breaks ties by the lower expert id).
        let mut tied = router.clone();
        for ex in (1..ne).step_by(2) {
            tied.copy_within((ex - 1) * N_EMBD..ex * N_EMBD, ex * N_EMBD);
        }
        w.add_f32_tensor(
            &format!("{p}.router_tied"),
            GgmlType::F32,
            &[N_EMBD as u64, ne as u64],
            &tied,
        )
        .map_err(e)?;
        let e3 = |c: usize, r: usize| [c as u64, r as u64, ne as u64];
        let mut sets = vec![
            ("gate", GgmlType::Q8_0, e3(N_EMBD, N_FF)),
            ("up", GgmlType::Q4_0, e3(N_EMBD, N_FF)),
            ("down", GgmlType::Q8_0, e3(N_FF, N_EMBD)),
        ];
        if ne == N_EXPERT {
            sets.push(("gate_up", GgmlType::Q8_0, e3(N_EMBD, 2 * N_FF)));
        }
        for (name, ty, dims) in sets {
            let n = dims.iter().product::<u64>() as usize;
            let v: Vec<f32> = randn(&mut rng, n).iter().map(|x| x * 0.2).collect();
            w.add_f32_tensor(&format!("{p}.{name}"), ty, &dims, &v)
                .map_err(e)?;
        }
    }
    // Norm weights for whole rows of the mat-mul widths and for heads.
    for n in [512usize, 160, 128, 64, LONG_COLS] {
        let v: Vec<f32> = randn(&mut rng, n).iter().map(|x| 1.0 + 0.3 * x).collect();
        w.add_f32_tensor(&format!("norm.{n}"), GgmlType::F32, &[n as u64], &v)
            .map_err(e)?;
    }
    // Projections of a 1,024-wide attention output (8 heads of 128).
    for ty in [GgmlType::Q4_K, GgmlType::Q8_0] {
        let v = randn(&mut rng, 1024 * MM_ROWS);
        let name = format!("mm.{}.1024", ty.name());
        w.add_f32_tensor(&name, ty, &[1024, MM_ROWS as u64], &v)
            .map_err(e)?;
    }
    // An F16 weight with rows a multiple of 32 (GPU prompt mat-muls take such rows whole).
    let v = randn(&mut rng, 64 * MM_ROWS);
    w.add_f32_tensor("mm.F16.64", GgmlType::F16, &[64, MM_ROWS as u64], &v)
        .map_err(e)?;
    // Readers of a SQ-wide pre-norm in an unquantized format and a 32-block one.
    for ty in [GgmlType::F32, GgmlType::Q8_0] {
        let v = randn(&mut rng, SQ * MM_ROWS);
        let name = format!("sqr.{}", ty.name());
        w.add_f32_tensor(&name, ty, &[SQ as u64, MM_ROWS as u64], &v)
            .map_err(e)?;
    }
    // A KM-wide K-quant MoE layer (Q4_K gate and up, Q6_K down, F32 router) with the residual
    // projection and the norm before it.
    for (name, ty, dims) in [
        ("kmoe.sq", T::Q4_K, vec![KM, KM]),
        ("kmoe.router", T::F32, vec![KM, KM_EXPERTS]),
        ("kmoe.gate", T::Q4_K, vec![KM, KM, KM_EXPERTS]),
        ("kmoe.up", T::Q4_K, vec![KM, KM, KM_EXPERTS]),
        ("kmoe.down", T::Q6_K, vec![KM, KM, KM_EXPERTS]),
    ] {
        let v: Vec<f32> = randn(&mut rng, dims.iter().product())
            .iter()
            .map(|x| x * 0.2)
            .collect();
        let dims: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
        w.add_f32_tensor(name, ty, &dims, &v).map_err(e)?;
    }
    let v: Vec<f32> = randn(&mut rng, KM).iter().map(|x| 1.0 + 0.3 * x).collect();
    w.add_f32_tensor("kmoe.norm", GgmlType::F32, &[KM as u64], &v)
        .map_err(e)?;
    // Key norms unlike the query norms of the same width (an attention preparing its inputs
    // must not take one for the other), and both for 256-wide heads (Gemma 3's).
    for (name, n) in [
        ("knorm.64", 64),
        ("knorm.128", 128),
        ("knorm.256", 256),
        ("norm.256", 256),
    ] {
        let v: Vec<f32> = randn(&mut rng, n).iter().map(|x| 1.0 + 0.3 * x).collect();
        w.add_f32_tensor(name, GgmlType::F32, &[n as u64], &v)
            .map_err(e)?;
    }
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "zinc-conformance-{}-{}.gguf",
        std::process::id(),
        COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    w.write_to(&path).map_err(e)?;
    let model = GgufModel::open(&path).map_err(e)?;
    Ok(Fixture {
        model: Arc::new(model),
        path,
    })
}

fn dequant(model: &GgufModel, name: &str) -> Vec<f32> {
    let t = model.tensor(name).expect("fixture tensor");
    zinc_quant::dequantize_to_vec(t.info.ty, t.data, t.info.n_elements as usize)
        .expect("fixture tensor decodes")
}

/// Compares `got` with `want` under per-element bounds; returns the worst error / bound.
fn judge(name: String, got: &[f32], want: &[f64], bound: impl Fn(usize) -> f64) -> CaseResult {
    if got.len() != want.len() {
        return CaseResult {
            name,
            worst: f64::INFINITY,
            ok: false,
            detail: format!("{} values, expected {}", got.len(), want.len()),
        };
    }
    let mut worst = 0.0f64;
    let mut at = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let r = if g.is_finite() {
            (g as f64 - w).abs() / bound(i).max(1e-30)
        } else {
            f64::INFINITY
        };
        if r > worst || r.is_nan() {
            worst = if r.is_nan() { f64::INFINITY } else { r };
            at = i;
        }
    }
    let detail = if got.is_empty() {
        String::new()
    } else {
        format!("worst at {at}: got {} want {:.6}", got[at], want[at])
    };
    CaseResult {
        ok: worst <= 1.0,
        name,
        worst,
        detail,
    }
}

fn norm(v: &[f32]) -> f64 {
    v.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt()
}

fn matmul_ref(w: &[f32], rows: usize, cols: usize, x: &[f32], ntok: usize) -> Vec<f64> {
    let mut out = vec![0.0; ntok * rows];
    for t in 0..ntok {
        for r in 0..rows {
            out[t * rows + r] = (0..cols)
                .map(|c| w[r * cols + c] as f64 * x[t * cols + c] as f64)
                .sum();
        }
    }
    out
}

/// `got`, the SwiGLU activation of `x` (`ntok` rows of `SQ`, as the backend read it) through
/// the `glu.gate.<ty>` and `glu.up.<ty>` fixtures, against SwiGLU of the reference products:
/// the error of g and u (each within the mat-mul bound) through silu(g)·u, whose slope in g is
/// below 1.1·|u|.
fn judge_swiglu(
    name: String,
    got: &[f32],
    m: &GgufModel,
    ty: GgmlType,
    x: &[f32],
    ntok: usize,
    tol: &Tolerance,
) -> CaseResult {
    let xr = dot_input(ty, x);
    let gd = dequant(m, &format!("glu.gate.{}", ty.name()));
    let ud = dequant(m, &format!("glu.up.{}", ty.name()));
    let rg = matmul_ref(&gd, GLU_FF, SQ, &xr, ntok);
    let ru = matmul_ref(&ud, GLU_FF, SQ, &xr, ntok);
    let silu = |v: f64| v / (1.0 + (-v).exp());
    let ra: Vec<f64> = rg.iter().zip(&ru).map(|(&g, &u)| silu(g) * u).collect();
    judge(name, got, &ra, |i| {
        let (t, r) = (i / GLU_FF, i % GLU_FF);
        let nx = norm(&x[t * SQ..(t + 1) * SQ]);
        let eg = tol.matmul * norm(&gd[r * SQ..(r + 1) * SQ]) * nx;
        let eu = tol.matmul * norm(&ud[r * SQ..(r + 1) * SQ]) * nx;
        1.1 * (ru[i].abs() + eu) * eg
            + silu(rg[i]).abs() * eu
            + tol.elementwise * ra[i].abs().max(1.0)
    })
}

/// `got`, a projection by `wd` (dequantized, `rows` × `cols`) of `x` (`ntok` rows, as the
/// backend read them back) recorded right after the kernel that produced `x`, against `exact`,
/// the same projection of `x` uploaded afresh on the same backend. A producer may quantize its
/// output for the projection itself: in the projection's own way (then the same bits), or in
/// Q8_0-style chunks of 32 that a K-quant reader takes with each chunk's own scale (Vulkan's
/// X32: the gate/up's `glu_rows`, the decode attention's `attn_x32`). Then against the
/// projection of those chunks: the float sums' error and two quanta of an element rounded the
/// other way (a device's reciprocal and ties round an element now and then to its neighbour;
/// a chunk read with another chunk's scale is off by a good part of the whole). Where the
/// projection's own quantization is already Q8_0-style (`chunks` false: a Q8_0 weight), only
/// the same bits pass.
fn judge_chunked_input(
    name: String,
    got: &[f32],
    exact: &[f32],
    wd: &[f32],
    (rows, cols, ntok): (usize, usize, usize),
    x: &[f32],
    chunks: bool,
) -> CaseResult {
    let same = got.len() == exact.len()
        && got
            .iter()
            .zip(exact)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if same || !chunks {
        let e: Vec<f64> = exact.iter().map(|&v| v as f64).collect();
        return judge(name, got, &e, |_| 0.0);
    }
    let xq = dot_input(GgmlType::Q8_0, x);
    let want = matmul_ref(wd, rows, cols, &xq, ntok);
    // Each element's quantum: its chunk's scale (the largest |q·d| is 127·d).
    let quantum: Vec<f64> = xq
        .chunks(32)
        .flat_map(|c| {
            let d = c.iter().fold(0.0f64, |m, &x| m.max(x.abs() as f64)) / 127.0;
            std::iter::repeat_n(d, c.len())
        })
        .collect();
    judge(name, got, &want, |i| {
        let (t, r) = (i / rows, i % rows);
        let (wr, xt) = (&wd[r * cols..(r + 1) * cols], &xq[t * cols..(t + 1) * cols]);
        let qt = &quantum[t * cols..(t + 1) * cols];
        let flip = wr
            .iter()
            .zip(qt)
            .fold(0.0f64, |m, (&w, &d)| m.max(w.abs() as f64 * d));
        1e-5 * norm(wr) * norm(xt) + 2.0 * flip
    })
}

/// The activations as a dot product with `ty` weights sees them (see the module docs).
fn dot_input(ty: GgmlType, x: &[f32]) -> Vec<f32> {
    use crate::cpu::dot::{act_kind, quantize_act, ActRow};
    let Some(kind) = act_kind(ty) else {
        return x.to_vec();
    };
    match quantize_act(kind, x) {
        ActRow::F32(v) | ActRow::Rounded(v) => v,
        ActRow::Q8(blocks) => blocks
            .iter()
            .flat_map(|b| b.qs.iter().map(move |&q| b.d * q as f32))
            .collect(),
        ActRow::Q8K(blocks) => blocks
            .iter()
            .flat_map(|b| b.qs.iter().map(move |&q| b.d * q as f32))
            .collect(),
    }
}

fn f16_round(v: &[f32]) -> Vec<f32> {
    v.iter().map(|&x| half::f16::from_f32(x).to_f32()).collect()
}

/// Runs every case (or those whose name contains `filter`) on `b`.
pub fn run<B: Backend>(
    b: &B,
    tol: &Tolerance,
    filter: Option<&str>,
) -> Result<Vec<CaseResult>, String> {
    let fx = fixture(0x5eed)?;
    let m = &fx.model;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut out = Vec::new();
    let want = |name: &str| filter.is_none_or(|f| name.contains(f));
    let weight = |name: &str| b.weight(m, name).map_err(|e| e.to_string());

    // Mat-mul / mat-vec for every format, 1, 3 and 37 tokens (both sides of the switch).
    for &ty in FORMATS {
        let name = format!("mm.{}", ty.name());
        let cols = mm_cols(ty);
        let wv = dequant(m, &name);
        let w = weight(&name)?;
        for ntok in [1usize, 3, 37] {
            let case = format!(
                "matmul {} rows={MM_ROWS} cols={cols} tokens={ntok}",
                ty.name()
            );
            if !want(&case) {
                continue;
            }
            let x = randn(&mut rng, ntok * cols);
            let y = b.read(&b.matmul(&w, &b.tensor_from(&x, ntok, cols)));
            let xq = dot_input(ty, &x);
            let r = matmul_ref(&wv, MM_ROWS, cols, &xq, ntok);
            out.push(judge(case, &y, &r, |i| {
                let (t, row) = (i / MM_ROWS, i % MM_ROWS);
                tol.matmul
                    * norm(&wv[row * cols..(row + 1) * cols])
                    * norm(&x[t * cols..(t + 1) * cols])
            }));
        }
        let case = format!("embed {}", ty.name());
        if want(&case) {
            let ids: Vec<u32> = (0..9).map(|_| rng.gen_range(0..MM_ROWS as u32)).collect();
            let y = b.read(&b.embed(&w, &ids, 1.7));
            let r: Vec<f64> = ids
                .iter()
                .flat_map(|&id| {
                    wv[id as usize * cols..(id as usize + 1) * cols]
                        .iter()
                        .map(|&v| v as f64 * 1.7)
                })
                .collect();
            out.push(judge(case, &y, &r, |i| 1e-6 * r[i].abs().max(1.0)));
        }
    }
    // A prompt-sized product with enough output tiles that backends keep their tiled mat-mul
    // for it (Vulkan: 2,048 rows × 256 tokens fill 256 tiles of 64 × 32).
    for ty in [GgmlType::F32, GgmlType::Q8_0] {
        let case = format!("matmul {} rows={WIDE_ROWS} cols=32 tokens=256", ty.name());
        if want(&case) {
            let name = format!("wide.{}", ty.name());
            let wv = dequant(m, &name);
            let w = weight(&name)?;
            let x = randn(&mut rng, 256 * 32);
            let y = b.read(&b.matmul(&w, &b.tensor_from(&x, 256, 32)));
            let r = matmul_ref(&wv, WIDE_ROWS, 32, &dot_input(ty, &x), 256);
            out.push(judge(case, &y, &r, |i| {
                let (t, row) = (i / WIDE_ROWS, i % WIDE_ROWS);
                tol.matmul * norm(&wv[row * 32..(row + 1) * 32]) * norm(&x[t * 32..(t + 1) * 32])
            }));
        }
    }
    for ty in LONG_FORMATS {
        for ntok in [1usize, 3] {
            let case = format!(
                "matmul {} rows={MM_ROWS} cols={LONG_COLS} tokens={ntok}",
                ty.name()
            );
            if !want(&case) {
                continue;
            }
            let name = format!("long.{}", ty.name());
            let wv = dequant(m, &name);
            let w = weight(&name)?;
            let x = randn(&mut rng, ntok * LONG_COLS);
            let y = b.read(&b.matmul(&w, &b.tensor_from(&x, ntok, LONG_COLS)));
            let r = matmul_ref(&wv, MM_ROWS, LONG_COLS, &dot_input(ty, &x), ntok);
            out.push(judge(case, &y, &r, |i| {
                let (t, row) = (i / MM_ROWS, i % MM_ROWS);
                tol.matmul
                    * norm(&wv[row * LONG_COLS..(row + 1) * LONG_COLS])
                    * norm(&x[t * LONG_COLS..(t + 1) * LONG_COLS])
            }));
        }
    }
    for ntok in [1usize, 37] {
        let case = format!("matmul F16 rows={MM_ROWS} cols=64 tokens={ntok}");
        if want(&case) {
            let wv = dequant(m, "mm.F16.64");
            let w = weight("mm.F16.64")?;
            let x = randn(&mut rng, ntok * 64);
            let y = b.read(&b.matmul(&w, &b.tensor_from(&x, ntok, 64)));
            let r = matmul_ref(&wv, MM_ROWS, 64, &dot_input(GgmlType::F16, &x), ntok);
            out.push(judge(case, &y, &r, |i| {
                let (t, row) = (i / MM_ROWS, i % MM_ROWS);
                tol.matmul * norm(&wv[row * 64..(row + 1) * 64]) * norm(&x[t * 64..(t + 1) * 64])
            }));
        }
    }
    // Residual mat-vecs: acc += W·x, decode-sized and prompt-sized.
    for (tname, ntok) in [("Q4_K", 1usize), ("Q6_K", 3), ("Q8_0", 1), ("Q4_K", 9)] {
        let case = format!("matmul_add {tname} tokens={ntok}");
        if !want(&case) {
            continue;
        }
        let name = format!("mm.{tname}");
        let ty = FORMATS
            .iter()
            .copied()
            .find(|t| t.name() == tname)
            .expect("format");
        let cols = mm_cols(ty);
        let wv = dequant(m, &name);
        let w = weight(&name)?;
        let x = randn(&mut rng, ntok * cols);
        let a0 = randn(&mut rng, ntok * MM_ROWS);
        let mut acc = b.tensor_from(&a0, ntok, MM_ROWS);
        b.matmul_add(&w, &b.tensor_from(&x, ntok, cols), &mut acc);
        let y = b.read(&acc);
        let r: Vec<f64> = matmul_ref(&wv, MM_ROWS, cols, &dot_input(ty, &x), ntok)
            .iter()
            .zip(&a0)
            .map(|(v, &a)| v + a as f64)
            .collect();
        out.push(judge(case, &y, &r, |i| {
            let (t, row) = (i / MM_ROWS, i % MM_ROWS);
            tol.matmul
                * norm(&wv[row * cols..(row + 1) * cols])
                * norm(&x[t * cols..(t + 1) * cols])
                + 1e-6 * (a0[i] as f64).abs()
        }));
    }

    if want("matvec fold") {
        let wv = dequant(m, "fold");
        let w = weight("fold")?;
        // Two tokens: the second token's outputs sit past the folded rows of the first.
        let x = randn(&mut rng, 64);
        let y = b.read(&b.matmul(&w, &b.tensor_from(&x, 2, 32)));
        let r = matmul_ref(&wv, FOLD_ROWS, 32, &dot_input(GgmlType::Q8_0, &x), 2);
        out.push(judge(
            format!("matvec fold rows={FOLD_ROWS} tokens=2"),
            &y,
            &r,
            |i| {
                let (t, row) = (i / FOLD_ROWS, i % FOLD_ROWS);
                tol.matmul * norm(&wv[row * 32..(row + 1) * 32]) * norm(&x[t * 32..(t + 1) * 32])
            },
        ));
    }

    // RMSNorm over whole rows and per head.
    for (wname, cols, rows) in [("norm.row", 1000usize, 3usize), ("norm.head", 96, 5)] {
        let case = format!("rms_norm {wname} cols={cols} rows={rows}");
        if !want(&case) {
            continue;
        }
        let wv = dequant(m, wname);
        let w = weight(wname)?;
        let g = wv.len();
        let x = randn(&mut rng, rows * cols);
        let mut t = b.tensor_from(&x, rows, cols);
        let src = b.tensor_from(&x, rows, cols);
        let into = b.rms_norm_into(&src, &w, 1e-6);
        b.rms_norm(&mut t, &w, 1e-6);
        let y = b.read(&t);
        // Out of place: the same values, and the source untouched.
        let (y_into, kept) = (b.read(&into), b.read(&src));
        let r: Vec<f64> = x
            .chunks(g)
            .flat_map(|grp| {
                let ms = grp.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / g as f64;
                let s = 1.0 / (ms + 1e-6).sqrt();
                grp.iter()
                    .zip(&wv)
                    .map(move |(&v, &wj)| v as f64 * s * wj as f64)
                    .collect::<Vec<_>>()
            })
            .collect();
        out.push(judge(case.clone(), &y, &r, |i| {
            tol.elementwise * r[i].abs().max(1.0)
        }));
        out.push(judge(format!("{case} into"), &y_into, &r, |i| {
            tol.elementwise * r[i].abs().max(1.0)
        }));
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        out.push(judge(format!("{case} source kept"), &kept, &x64, |_| 0.0));
    }

    // RoPE: both pairings, partial rotation, linear scaling, positions up to 3000.
    for (style, head_dim, n_rot, n_head) in [
        (RopeStyle::Norm, 64usize, 64usize, 3usize),
        (RopeStyle::Neox, 128, 96, 5),
    ] {
        let case = format!("rope {style:?} head_dim={head_dim} n_rot={n_rot} heads={n_head}");
        if !want(&case) {
            continue;
        }
        let rows = 4;
        let cols = head_dim * n_head;
        let x = randn(&mut rng, rows * cols);
        let pos: Vec<u32> = vec![0, 1, 517, 2999];
        let p = RopeParams {
            style,
            n_rot,
            freq_base: 10000.0,
            freq_scale: 0.5,
        };
        let mut t = b.tensor_from(&x, rows, cols);
        b.rope(&mut t, head_dim, &pos, &p);
        let y = b.read(&t);
        let mut r: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        for (t, &pt) in pos.iter().enumerate() {
            for h in 0..n_head {
                let base = t * cols + h * head_dim;
                for i in 0..n_rot / 2 {
                    let theta = pt as f64 * 0.5 * 10000f64.powf(-2.0 * i as f64 / n_rot as f64);
                    let (a, bb) = match style {
                        RopeStyle::Norm => (base + 2 * i, base + 2 * i + 1),
                        RopeStyle::Neox => (base + i, base + i + n_rot / 2),
                    };
                    let (x0, x1) = (x[a] as f64, x[bb] as f64);
                    r[a] = x0 * theta.cos() - x1 * theta.sin();
                    r[bb] = x0 * theta.sin() + x1 * theta.cos();
                }
            }
        }
        // Angles near 3000 rad carry f32 rounding of ~2e-4 rad in any f32 implementation.
        out.push(judge(case.clone(), &y, &r, |_| 1e-3));
        // A decode step's one row (a backend may take its angles from a table made for it):
        // the last row alone.
        let last = &x[(rows - 1) * cols..];
        let mut one = b.tensor_from(last, 1, cols);
        b.rope(&mut one, head_dim, &pos[rows - 1..], &p);
        let r_last = &r[(rows - 1) * cols..];
        out.push(judge(
            format!("{case} one row"),
            &b.read(&one),
            r_last,
            |_| 1e-3,
        ));
        // Queries and keys (two heads fewer) together: exactly what rope gives each alone.
        let kcols = cols - 2 * head_dim;
        let kx = randn(&mut rng, rows * kcols);
        let mut q2 = b.tensor_from(&x, rows, cols);
        let mut k2 = b.tensor_from(&kx, rows, kcols);
        let mut k1 = b.tensor_from(&kx, rows, kcols);
        b.rope_qk(&mut q2, &mut k2, head_dim, &pos, &p);
        b.rope(&mut k1, head_dim, &pos, &p);
        let both: Vec<f32> = [b.read(&q2), b.read(&k2)].concat();
        let alone: Vec<f64> = y.iter().chain(&b.read(&k1)).map(|&v| v as f64).collect();
        out.push(judge(format!("{case} q+k"), &both, &alone, |_| 0.0));
    }

    // Element-wise ops, copies and gathers.
    if want("elementwise") {
        let (rows, cols) = (7usize, 100usize);
        let x = randn(&mut rng, rows * cols);
        let y2 = randn(&mut rng, rows * cols);
        let xt = b.tensor_from(&x, rows, cols);
        let yt = b.tensor_from(&y2, rows, cols);
        let el = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<f64>>();
        let bnd = |r: &[f64]| {
            let r = r.to_vec();
            move |i: usize| tol.elementwise * r[i].abs().max(1.0)
        };
        let mut t = b.copy(&xt);
        b.scale(&mut t, -2.5);
        let r: Vec<f64> = x.iter().map(|&v| v as f64 * -2.5).collect();
        out.push(judge("elementwise scale".into(), &b.read(&t), &r, bnd(&r)));
        let mut t = b.copy(&xt);
        b.add(&mut t, &yt);
        let r: Vec<f64> = x
            .iter()
            .zip(&y2)
            .map(|(&a, &c)| a as f64 + c as f64)
            .collect();
        out.push(judge("elementwise add".into(), &b.read(&t), &r, bnd(&r)));
        let mut t = b.copy(&xt);
        b.scale(&mut t, 40.0);
        b.softcap(&mut t, 30.0);
        let r: Vec<f64> = x
            .iter()
            .map(|&v| 30.0 * (v as f64 * 40.0 / 30.0).tanh())
            .collect();
        out.push(judge(
            "elementwise softcap".into(),
            &b.read(&t),
            &r,
            bnd(&r),
        ));
        let bias = weight("bias")?;
        let bv = dequant(m, "bias");
        let mut t = b.copy(&xt);
        b.add_bias(&mut t, &bias);
        let r: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| v as f64 + bv[i % cols] as f64)
            .collect();
        out.push(judge(
            "elementwise add_bias".into(),
            &b.read(&t),
            &r,
            bnd(&r),
        ));
        let mut big = b.copy(&xt);
        b.scale(&mut big, 30.0); // saturating tails of silu and gelu
        let bigv: Vec<f64> = x.iter().map(|&v| v as f64 * 30.0).collect();
        for (act, f) in [
            (
                GatedAct::SwiGlu,
                (|g: f64| g / (1.0 + (-g).exp())) as fn(f64) -> f64,
            ),
            (GatedAct::GeGlu, |g: f64| {
                0.5 * g * (1.0 + (0.797_884_560_802_865_4 * (g + 0.044715 * g * g * g)).tanh())
            }),
        ] {
            let o = b.read(&b.gated(&big, &yt, act));
            let r: Vec<f64> = bigv
                .iter()
                .zip(&y2)
                .map(|(&g, &u)| f(g) * u as f64)
                .collect();
            // The CPU's GELU comes from llama.cpp's f16 table: ~1e-3 relative.
            let rel = if act == GatedAct::GeGlu {
                2e-3
            } else {
                tol.elementwise
            };
            let rr = r.clone();
            out.push(judge(format!("elementwise {act:?}"), &o, &r, move |i| {
                rel * rr[i].abs().max(1.0)
            }));
        }
        let parts = b.split_cols(&xt, &[13, 80, 7]);
        let mut col0 = 0;
        for (k, p) in parts.iter().enumerate() {
            let wdt = b.shape(p).1;
            let r: Vec<f64> = (0..rows)
                .flat_map(|t| {
                    x[t * cols + col0..t * cols + col0 + wdt]
                        .iter()
                        .map(|&v| v as f64)
                })
                .collect();
            out.push(judge(
                format!("split_cols part {k}"),
                &b.read(p),
                &r,
                |_| 1e-30,
            ));
            col0 += wdt;
        }
        let sel = b.select_rows(&xt, &[6, 0, 3]);
        let r: Vec<f64> = [6usize, 0, 3]
            .iter()
            .flat_map(|&t| el(&x[t * cols..(t + 1) * cols]))
            .collect();
        out.push(judge("select_rows".into(), &b.read(&sel), &r, |_| 1e-30));
        let z = b.read(&b.tensor(3, 5));
        out.push(judge("tensor zeroed".into(), &z, &[0.0; 15], |_| 1e-30));
        let mut am = randn(&mut rng, 3 * 70_000);
        am[2 * 70_000 + 69_999] = 100.0;
        am[5] = 100.0;
        am[70_000 + 123] = 50.0;
        am[70_000 + 124] = 50.0; // a tie: the lower index wins
        let got = b.argmax(&b.tensor_from(&am, 3, 70_000));
        let ok = got == vec![5, 123, 69_999];
        out.push(CaseResult {
            name: "argmax".into(),
            worst: if ok { 0.0 } else { f64::INFINITY },
            ok,
            detail: format!("got {got:?}, want [5, 123, 69999]"),
        });
    }

    // Attention over the cache: GQA, odd head counts, windows, prompt batches and long contexts.
    for (n_head, n_head_kv, head_dim, ctx, rows, window) in [
        (6usize, 2usize, 64usize, 40usize, 1usize, None),
        (5, 1, 256, 40, 19, None),
        (4, 4, 64, 40, 9, Some(7usize)),
        (8, 2, 128, 1500, 1, None),
        (8, 2, 128, 1500, 1, Some(700)),
        (3, 3, 32, 300, 70, None),
        (4, 2, 64, 200, 101, Some(33)),
        (8, 2, 128, 300, 130, None),
        // A prompt batch after 400 cached keys: long causal ranges (GPUs' prompt attention
        // splits them into runs of key blocks).
        (8, 2, 128, 700, 300, None),
        (8, 2, 128, 200, 1, None),
        // A decode step over one slice at the GPUs' default (up to 128 keys: the output
        // written by the attention's own workgroups, and quantized there for a projection).
        (8, 2, 128, 100, 1, None),
        // Decode (attn_dec on GPUs) with head dimensions read in several chunks, and with 8
        // query heads a KV head (its scores need more shared memory than lavapipe has).
        (8, 2, 96, 700, 1, None),
        (16, 2, 96, 700, 1, None),
        (5, 1, 80, 600, 1, None),
        // A decode step over 3,000 keys: many slices of 64-wide heads (on lavapipe a key's
        // invocations each take one 8-dimension vector, as 128-wide heads have on GPUs).
        (8, 2, 64, 3000, 1, None),
        // Split slices of two and of four query heads a KV head, one windowed.
        (4, 2, 64, 900, 1, None),
        (8, 2, 64, 1200, 1, Some(500)),
        // Slices of 256 keys and more of 128-wide heads (GPUs' workgroups of 256).
        (8, 2, 128, 4100, 1, None),
    ] {
        let case = format!(
            "attention heads={n_head}/{n_head_kv} head_dim={head_dim} ctx={ctx} rows={rows} window={window:?}"
        );
        if !want(&case) {
            continue;
        }
        let kv_dim = n_head_kv * head_dim;
        let mut cache = b.kv_cache(ctx + 8, &[kv_dim, kv_dim]);
        let layer = 1;
        let k = randn(&mut rng, ctx * kv_dim);
        let v = randn(&mut rng, ctx * kv_dim);
        let positions: Vec<u32> = (0..ctx as u32).collect();
        // The whole context in one store, except the query rows, stored in a second batch.
        let first = ctx - rows;
        let (kt0, vt0) = (
            b.tensor_from(&k[..first * kv_dim], first, kv_dim),
            b.tensor_from(&v[..first * kv_dim], first, kv_dim),
        );
        if first > 0 {
            b.kv_store(&mut cache, layer, &kt0, &vt0, &positions[..first])
                .map_err(|e| e.to_string())?;
        }
        let (kt1, vt1) = (
            b.tensor_from(&k[first * kv_dim..], rows, kv_dim),
            b.tensor_from(&v[first * kv_dim..], rows, kv_dim),
        );
        b.kv_store(&mut cache, layer, &kt1, &vt1, &positions[first..])
            .map_err(|e| e.to_string())?;
        let q = randn(&mut rng, rows * n_head * head_dim);
        let p = AttnParams {
            n_head,
            n_head_kv,
            head_dim,
            scale: 1.0 / (head_dim as f32).sqrt(),
            window,
        };
        let y = b.read(&b.attention(
            &b.tensor_from(&q, rows, n_head * head_dim),
            &cache,
            layer,
            &positions[first..],
            &p,
        ));
        let (kh, vh) = (f16_round(&k), f16_round(&v));
        let mut r = vec![0.0f64; rows * n_head * head_dim];
        for t in 0..rows {
            let pos = first + t;
            let lo = window.map_or(0, |w| (pos + 1).saturating_sub(w));
            for h in 0..n_head {
                let kvh = h / (n_head / n_head_kv);
                let qv = &q[(t * n_head + h) * head_dim..(t * n_head + h + 1) * head_dim];
                let scores: Vec<f64> = (lo..=pos)
                    .map(|j| {
                        let kr =
                            &kh[j * kv_dim + kvh * head_dim..j * kv_dim + (kvh + 1) * head_dim];
                        p.scale as f64
                            * qv.iter()
                                .zip(kr)
                                .map(|(&a, &c)| a as f64 * c as f64)
                                .sum::<f64>()
                    })
                    .collect();
                let mx = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = scores.iter().map(|s| (s - mx).exp()).collect();
                let z: f64 = e.iter().sum();
                for d in 0..head_dim {
                    r[(t * n_head + h) * head_dim + d] = (lo..=pos)
                        .zip(&e)
                        .map(|(j, &w)| w / z * vh[j * kv_dim + kvh * head_dim + d] as f64)
                        .sum();
                }
            }
        }
        let vmax = vh.iter().fold(0.0f64, |m, &x| m.max(x.abs() as f64));
        out.push(judge(case.clone(), &y, &r, |_| tol.attention * vmax));
        // A decode step's output projected right away (the attention may quantize it for the
        // projection as it writes it): the same as projecting the output read back.
        if rows == 1 && n_head * head_dim == 1024 {
            for ty in ["Q4_K", "Q8_0"] {
                let wo = weight(&format!("mm.{ty}.1024"))?;
                let _ = b.read(&b.matmul(&wo, &b.tensor_from(&y, 1, 1024))); // sets the mode
                let a = b.attention(
                    &b.tensor_from(&q, rows, n_head * head_dim),
                    &cache,
                    layer,
                    &positions[first..],
                    &p,
                );
                // Projected before anything is read back (reading records a copy, after
                // which the projection would quantize its input afresh): either the same bits
                // as the output read back and projected, or (a decode attention quantizing its
                // output in chunks of 32 for a K-quant, Vulkan's `attn_x32`) the projection of
                // those chunks.
                let direct = b.read(&b.matmul(&wo, &a));
                let av = b.read(&a);
                // The output itself, merged with its quantization (several heads a workgroup).
                out.push(judge(format!("{case} quantized for {ty}"), &av, &r, |_| {
                    tol.attention * vmax
                }));
                let again = b.read(&b.matmul(&wo, &b.tensor_from(&av, 1, 1024)));
                let wd = dequant(m, &format!("mm.{ty}.1024"));
                out.push(judge_chunked_input(
                    format!("{case} then {ty}"),
                    &direct,
                    &again,
                    &wd,
                    (MM_ROWS, 1024, 1),
                    &av,
                    ty != "Q8_0",
                ));
            }
        }
    }

    // Attention's inputs in one step (q/k norms, RoPE, K/V store): exactly the ops one after
    // another, on this backend — with the attention that follows recorded first (as a model
    // records it: a backend may fuse the two), at positions that put the new key in a later
    // slice of the cache, and the cache it leaves read by another attention.
    for (style, head_dim, n_rot, nq, nk, q_norm, k_norm, rows, first) in [
        (
            RopeStyle::Neox,
            128usize,
            128usize,
            4usize,
            2usize,
            true,
            true,
            1usize,
            2u32,
        ),
        (RopeStyle::Neox, 128, 128, 4, 2, true, true, 1, 300),
        (RopeStyle::Norm, 64, 32, 8, 2, true, false, 1, 41),
        (RopeStyle::Norm, 64, 32, 3, 1, false, false, 5, 2),
        (RopeStyle::Neox, 64, 64, 2, 2, true, false, 3, 2),
        // Prompt rows (GPUs may take them a subgroup a head), normed both ways, heads of 512
        // with a partial rotation and of 160 (a 64-wide workgroup's sums over uneven counts).
        (RopeStyle::Neox, 128, 128, 4, 2, true, true, 9, 30),
        (RopeStyle::Norm, 64, 32, 6, 2, true, true, 7, 5),
        (RopeStyle::Neox, 512, 128, 2, 1, true, true, 6, 100),
        (RopeStyle::Neox, 160, 160, 3, 1, true, true, 5, 2),
    ] {
        let case = format!(
            "qk_norm_rope_store {style:?} head_dim={head_dim} n_rot={n_rot} heads={nq}/{nk} norms={q_norm}/{k_norm} rows={rows} from={first}"
        );
        if !want(&case) {
            continue;
        }
        let nw = weight(&format!("norm.{head_dim}"))?;
        let (qn, kn) = (q_norm.then_some(&nw), k_norm.then_some(&nw));
        let (qc, kc) = (nq * head_dim, nk * head_dim);
        let (qv, kv, vv) = (
            randn(&mut rng, rows * qc),
            randn(&mut rng, rows * kc),
            randn(&mut rng, rows * kc),
        );
        let positions: Vec<u32> = (0..rows as u32).map(|p| 3 * p + first).collect();
        let p = RopeParams {
            style,
            n_rot,
            freq_base: 10000.0,
            freq_scale: 1.0,
        };
        let ctx = 3 * rows + first as usize;
        let vt = b.tensor_from(&vv, rows, kc);
        let (mut q1, mut k1) = (b.tensor_from(&qv, rows, qc), b.tensor_from(&kv, rows, kc));
        let mut c1 = b.kv_cache(ctx, &[kc]);
        if let Some(n) = qn {
            b.rms_norm(&mut q1, n, 1e-6);
        }
        if let Some(n) = kn {
            b.rms_norm(&mut k1, n, 1e-6);
        }
        b.rope_qk(&mut q1, &mut k1, head_dim, &positions, &p);
        b.kv_store(&mut c1, 0, &k1, &vt, &positions)
            .map_err(|e| e.to_string())?;
        let (mut q2, mut k2) = (b.tensor_from(&qv, rows, qc), b.tensor_from(&kv, rows, kc));
        let mut c2 = b.kv_cache(ctx, &[kc]);
        b.qk_norm_rope_store(
            &mut q2,
            &mut k2,
            &vt,
            (qn, kn),
            1e-6,
            head_dim,
            &positions,
            &p,
            &mut c2,
            0,
        )
        .map_err(|e| e.to_string())?;
        let ap = AttnParams {
            n_head: nq,
            n_head_kv: nk,
            head_dim,
            scale: 0.3,
            window: None,
        };
        // The attention of the stored rows reads back every key and value written (the one
        // step's first, right after it, as a model records it and as a backend that fuses the
        // two would need).
        let a2 = b.read(&b.attention(&q2, &c2, 0, &positions, &ap));
        let a1 = b.read(&b.attention(&q1, &c1, 0, &positions, &ap));
        // And the cache it left: what a later step's attention reads.
        let a3 = b.read(&b.attention(&q1, &c2, 0, &positions, &ap));
        let want64 = |v: Vec<f32>| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        let got: Vec<f32> = [b.read(&q2), b.read(&k2), a2, a3].concat();
        let sep = want64([b.read(&q1), b.read(&k1), a1.clone(), a1].concat());
        out.push(judge(case, &got, &sep, |_| 0.0));
    }

    // Attention with its inputs' preparation (`prep_attention`: a backend may do the q/k
    // norms, RoPE and K/V store inside its decode attention): the numbers of
    // `qk_norm_rope_store` then `attention` on this backend, over a cache already holding
    // `first` positions — one slice or several (the new key in the last), windowed, with and
    // without norms — and the cache it leaves read by another attention. The same arithmetic,
    // but where a backend compiles the fused form as another kernel its compiler may contract
    // a product and a sum into one FMA where the other's did not (lavapipe does): within 10⁻⁵
    // of the largest output, where a wrong norm, rotation or key is off by its own size.
    let (neox, plain) = (RopeStyle::Neox, RopeStyle::Norm);
    let gemma_scale = Some(0.088_388_35f32);
    for (style, head_dim, n_rot, nq, nk, q_norm, k_norm, rows, first, window, q_scale) in [
        (
            neox, 128usize, 128usize, 4usize, 2usize, true, true, 1usize, 2usize, None, None,
        ),
        (neox, 128, 128, 8, 2, true, true, 1, 700, None, None),
        (neox, 128, 128, 4, 4, true, true, 1, 1300, None, None),
        (plain, 64, 32, 8, 2, true, false, 1, 41, None, None),
        (
            plain,
            64,
            64,
            3,
            1,
            false,
            false,
            1,
            600,
            Some(100usize),
            None,
        ),
        (neox, 64, 64, 16, 2, false, true, 1, 130, None, None),
        (neox, 64, 64, 4, 2, true, true, 3, 600, None, None),
        (neox, 64, 64, 8, 2, true, true, 1, 3000, None, None),
        // 256-wide heads (more than a 128-invocation workgroup), over one slice and several.
        (neox, 256, 256, 4, 1, true, true, 1, 20, None, None),
        (neox, 256, 256, 4, 1, true, true, 1, 900, None, None),
        // Gemma 3's pre-scaled queries, windowed (its local layers) and not.
        (
            neox,
            128,
            128,
            4,
            1,
            true,
            true,
            1,
            700,
            Some(512),
            gemma_scale,
        ),
        (neox, 128, 128, 4, 1, true, true, 1, 9, None, gemma_scale),
    ] {
        let case = format!(
            "prep_attention {style:?} head_dim={head_dim} n_rot={n_rot} heads={nq}/{nk} norms={q_norm}/{k_norm} rows={rows} from={first} window={window:?} q_scale={q_scale:?}"
        );
        if !want(&case) {
            continue;
        }
        let (qw, kw) = (
            weight(&format!("norm.{head_dim}"))?,
            weight(&format!("knorm.{head_dim}"))?,
        );
        let (qn, kn) = (q_norm.then_some(&qw), k_norm.then_some(&kw));
        let (qc, kc) = (nq * head_dim, nk * head_dim);
        let ctx = first + rows + 4;
        let (k0, v0) = (randn(&mut rng, first * kc), randn(&mut rng, first * kc));
        let (qv, kv, vv) = (
            randn(&mut rng, rows * qc),
            randn(&mut rng, rows * kc),
            randn(&mut rng, rows * kc),
        );
        let before: Vec<u32> = (0..first as u32).collect();
        let positions: Vec<u32> = (first as u32..(first + rows) as u32).collect();
        let rope = RopeParams {
            style,
            n_rot,
            freq_base: 1_000_000.0,
            freq_scale: 1.0,
        };
        let ap = AttnParams {
            n_head: nq,
            n_head_kv: nk,
            head_dim,
            scale: 0.3,
            window,
        };
        let mut caches = Vec::new();
        for _ in 0..2 {
            let mut c = b.kv_cache(ctx, &[kc]);
            if first > 0 {
                let (kt, vt) = (b.tensor_from(&k0, first, kc), b.tensor_from(&v0, first, kc));
                b.kv_store(&mut c, 0, &kt, &vt, &before)
                    .map_err(|e| e.to_string())?;
            }
            caches.push(c);
        }
        let (mut c2, mut c1) = (caches.pop().expect("two"), caches.pop().expect("two"));
        let vt = b.tensor_from(&vv, rows, kc);
        let (mut q1, mut k1) = (b.tensor_from(&qv, rows, qc), b.tensor_from(&kv, rows, kc));
        b.qk_norm_rope_store(
            &mut q1,
            &mut k1,
            &vt,
            (qn, kn),
            1e-6,
            head_dim,
            &positions,
            &rope,
            &mut c1,
            0,
        )
        .map_err(|e| e.to_string())?;
        if let Some(sc) = q_scale {
            b.scale(&mut q1, sc);
        }
        let a1 = b.read(&b.attention(&q1, &c1, 0, &positions, &ap));
        let a2 = b
            .prep_attention(
                b.tensor_from(&qv, rows, qc),
                b.tensor_from(&kv, rows, kc),
                &vt,
                (qn, kn),
                1e-6,
                &positions,
                &rope,
                &mut c2,
                0,
                &ap,
                q_scale,
            )
            .map_err(|e| e.to_string())?;
        let a2 = b.read(&a2);
        // What it left in the cache, read by the separate path's queries.
        let a3 = b.read(&b.attention(&q1, &c2, 0, &positions, &ap));
        let want64: Vec<f64> = [a1.clone(), a1]
            .concat()
            .iter()
            .map(|&x| x as f64)
            .collect();
        let big = want64.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        out.push(judge(case, &[a2, a3].concat(), &want64, |_| 1e-5 * big));
    }
    // A decode step past the cache: the context overflow named, nothing written.
    let case = "prep_attention past the cache".to_string();
    if want(&case) {
        let (hd, nq, nk) = (64usize, 4usize, 2usize);
        let mut c = b.kv_cache(8, &[nk * hd]);
        let got = b.prep_attention(
            b.tensor_from(&randn(&mut rng, nq * hd), 1, nq * hd),
            b.tensor_from(&randn(&mut rng, nk * hd), 1, nk * hd),
            &b.tensor_from(&randn(&mut rng, nk * hd), 1, nk * hd),
            (None, None),
            1e-6,
            &[8],
            &RopeParams {
                style: RopeStyle::Neox,
                n_rot: hd,
                freq_base: 10000.0,
                freq_scale: 1.0,
            },
            &mut c,
            0,
            &AttnParams {
                n_head: nq,
                n_head_kv: nk,
                head_dim: hd,
                scale: 0.125,
                window: None,
            },
            None,
        );
        let ok = matches!(
            got,
            Err(crate::BackendError::ContextOverflow { pos: 8, n_ctx: 8 })
        );
        out.push(CaseResult {
            name: case,
            worst: if ok { 0.0 } else { f64::INFINITY },
            ok,
            detail: if ok {
                String::new()
            } else {
                format!("expected a context overflow at 8 of 8, got {:?}", got.err())
            },
        });
    }

    // Kernels that quantize their output for the next mat-vec (a pre-norm read by three
    // projections, a gated activation read by the down-projection): the same numbers as the
    // f32 output read back and multiplied anew, and as the reference product.
    // (Rows of 2,304 take a norm workgroup of 512: a row in two workgroups, the second with
    // 256 values. 40 tokens: a prompt's, whose pre-norm Vulkan's `norm_round` computes with
    // the rounding its projections read, in the mode of the separate path's last rounding.)
    for (prefix, tys, cols) in [
        ("mm", ["Q4_K", "Q6_K", "Q5_K"], 512usize),
        ("mm", ["Q8_0", "Q4_0", "Q5_1"], 160),
        ("long", ["Q4_K", "Q6_K", "Q5_K"], LONG_COLS),
    ] {
        for ntok in [1usize, 3, 40] {
            let case = format!("fused quantization {} cols={cols} tokens={ntok}", tys[0]);
            if !want(&case) {
                continue;
            }
            let ws = tys
                .iter()
                .map(|t| weight(&format!("{prefix}.{t}")))
                .collect::<Result<Vec<_>, _>>()?;
            let wvs: Vec<Vec<f32>> = tys
                .iter()
                .map(|t| dequant(m, &format!("{prefix}.{t}")))
                .collect();
            let ty = |i: usize| GgmlType::from_name(tys[i]).expect("format");
            let nw = weight(&format!("norm.{cols}"))?;
            let x = randn(&mut rng, ntok * cols);
            let xt = b.tensor_from(&x, ntok, cols);
            // Separately: the norm read back, then each projection of a fresh tensor.
            let mut h0 = b.copy(&xt);
            b.rms_norm(&mut h0, &nw, 1e-6);
            let hv = b.read(&h0);
            let hf = b.tensor_from(&hv, ntok, cols);
            let sep: Vec<f32> = ws.iter().flat_map(|w| b.read(&b.matmul(w, &hf))).collect();
            // Together: three projections of the pre-norm, recorded before any read.
            let h = b.rms_norm_into(&xt, &nw, 1e-6);
            let ys: Vec<_> = ws.iter().map(|w| b.matmul(w, &h)).collect();
            let got: Vec<f32> = ys.iter().flat_map(|y| b.read(y)).collect();
            let sep64: Vec<f64> = sep.iter().map(|&v| v as f64).collect();
            out.push(judge(format!("{case} pre-norm"), &got, &sep64, |_| 0.0));
            let hv64: Vec<f64> = hv.iter().map(|&v| v as f64).collect();
            out.push(judge(
                format!("{case} pre-norm f32"),
                &b.read(&h),
                &hv64,
                |_| 0.0,
            ));
            // Against the reference product of the (exactly checked) normed values.
            let r: Vec<f64> = (0..3)
                .flat_map(|i| matmul_ref(&wvs[i], MM_ROWS, cols, &dot_input(ty(i), &hv), ntok))
                .collect();
            out.push(judge(format!("{case} reference"), &got, &r, |i| {
                let (wi, t, row) = (i / (ntok * MM_ROWS), (i / MM_ROWS) % ntok, i % MM_ROWS);
                tol.matmul
                    * norm(&wvs[wi][row * cols..(row + 1) * cols])
                    * norm(&hv[t * cols..(t + 1) * cols])
            }));
            // A gated activation into a residual down-projection.
            let (g, u) = (randn(&mut rng, ntok * cols), randn(&mut rng, ntok * cols));
            let (gt, ut) = (b.tensor_from(&g, ntok, cols), b.tensor_from(&u, ntok, cols));
            let a0 = randn(&mut rng, ntok * MM_ROWS);
            let av = b.read(&b.gated(&gt, &ut, GatedAct::SwiGlu));
            let mut acc1 = b.tensor_from(&a0, ntok, MM_ROWS);
            b.matmul_add(&ws[1], &b.tensor_from(&av, ntok, cols), &mut acc1);
            let mut acc2 = b.tensor_from(&a0, ntok, MM_ROWS);
            let a = b.gated(&gt, &ut, GatedAct::SwiGlu);
            b.matmul_add(&ws[1], &a, &mut acc2);
            let want1: Vec<f64> = b.read(&acc1).iter().map(|&v| v as f64).collect();
            out.push(judge(
                format!("{case} gated"),
                &b.read(&acc2),
                &want1,
                |_| 0.0,
            ));
            let silu = |v: f64| v / (1.0 + (-v).exp());
            let ra: Vec<f64> = g
                .iter()
                .zip(&u)
                .map(|(&gv, &uv)| silu(gv as f64) * uv as f64)
                .collect();
            out.push(judge(format!("{case} gated f32"), &b.read(&a), &ra, |i| {
                tol.elementwise * ra[i].abs().max(1.0)
            }));
        }
    }

    // A prompt's projections of one input recorded one after another, then a residual one (on
    // a GPU with cooperative matrices and `mm_beside`, the later ones run beside the first
    // with no barrier: any buffer overwritten while read shows here): the same bits as each
    // projection of a fresh copy on its own, the residual as that product added to it.
    for ntok in [40usize] {
        let case = format!("prompt projections of one input cols={LONG_COLS} tokens={ntok}");
        if !want(&case) {
            continue;
        }
        let ws = ["Q4_K", "Q6_K", "Q5_K"]
            .iter()
            .map(|t| weight(&format!("long.{t}")))
            .collect::<Result<Vec<_>, _>>()?;
        let x = randn(&mut rng, ntok * LONG_COLS);
        let sep: Vec<f32> = ws
            .iter()
            .flat_map(|w| b.read(&b.matmul(w, &b.tensor_from(&x, ntok, LONG_COLS))))
            .collect();
        let a0 = randn(&mut rng, ntok * MM_ROWS);
        let xt = b.tensor_from(&x, ntok, LONG_COLS);
        let ys: Vec<_> = ws.iter().map(|w| b.matmul(w, &xt)).collect();
        let mut acc = b.tensor_from(&a0, ntok, MM_ROWS);
        b.matmul_add(&ws[0], &xt, &mut acc);
        let got: Vec<f32> = ys.iter().flat_map(|y| b.read(y)).collect();
        let sep64: Vec<f64> = sep.iter().map(|&v| v as f64).collect();
        out.push(judge(format!("{case} together"), &got, &sep64, |_| 0.0));
        let want_acc: Vec<f64> = a0.iter().zip(&sep).map(|(&a, &p)| (a + p) as f64).collect();
        out.push(judge(
            format!("{case} residual"),
            &b.read(&acc),
            &want_acc,
            |_| 0.0,
        ));
    }

    // A gated FFN's gate and up projections with their activation (`gate_up_act`; on GPUs'
    // decode steps the activation and its quantization in the mat-vecs' tail): the same bits as
    // matmul, matmul and gated on the same backend, its down-projection the same as one of the
    // f32 activation read back, and SwiGLU against the reference.
    for ty in [GgmlType::Q4_K, GgmlType::Q6_K] {
        // (40 tokens: a prompt's, whose activation Vulkan's `glu_round` computes in the
        // dispatch that rounds it for the down-projection.)
        for (ntok, act) in [
            (1usize, GatedAct::SwiGlu),
            (3, GatedAct::SwiGlu),
            (1, GatedAct::GeGlu),
            (40, GatedAct::SwiGlu),
            (40, GatedAct::GeGlu),
        ] {
            let case = format!(
                "gate_up_act {} rows={GLU_FF} tokens={ntok} {act:?}",
                ty.name()
            );
            if !want(&case) {
                continue;
            }
            let gw = weight(&format!("glu.gate.{}", ty.name()))?;
            let uw = weight(&format!("glu.up.{}", ty.name()))?;
            let dw = weight("glu.down.Q4_K")?;
            let x = randn(&mut rng, ntok * SQ);
            // Separately, each output read back.
            let xt = b.tensor_from(&x, ntok, SQ);
            let (g, u) = (b.matmul(&gw, &xt), b.matmul(&uw, &xt));
            let sep = b.read(&b.gated(&g, &u, act));
            let ysep = b.read(&b.matmul(&dw, &b.tensor_from(&sep, ntok, GLU_FF)));
            // Together, read by the down-projection before anything is read back.
            let a = b.gate_up_act(&gw, &uw, &b.tensor_from(&x, ntok, SQ), act);
            let y = b.matmul(&dw, &a);
            let (av, yv) = (b.read(&a), b.read(&y));
            let f64s = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
            out.push(judge(
                format!("{case} activation"),
                &av,
                &f64s(&sep),
                |_| 0.0,
            ));
            // The down-projection reads the activation as the separate path quantizes it (the
            // same bits), or quantized in Q8_0-style chunks of 32 where the gate/up quantize
            // their own rows (Vulkan's `glu_rows`).
            let dd = dequant(m, "glu.down.Q4_K");
            let shape = (MM_ROWS, GLU_FF, ntok);
            out.push(judge_chunked_input(
                format!("{case} down"),
                &yv,
                &ysep,
                &dd,
                shape,
                &av,
                true,
            ));
            if act != GatedAct::SwiGlu {
                continue;
            }
            out.push(judge_swiglu(
                format!("{case} reference"),
                &av,
                m,
                ty,
                &x,
                ntok,
                tol,
            ));
        }
    }

    // A residual K-quant projection (`matmul_add`, on decode steps the K-quant decode mat-vec's
    // accumulating store) and the next block's pre-norm of its result, read by a projection:
    // both against the reference.
    for ty in [GgmlType::Q4_K, GgmlType::Q6_K] {
        for ntok in [1usize, 3] {
            let case = format!("residual + norm {} rows={SQ} tokens={ntok}", ty.name());
            if !want(&case) {
                continue;
            }
            let w = weight(&format!("sq.{}", ty.name()))?;
            let wv = dequant(m, &format!("sq.{}", ty.name()));
            let nw = weight(&format!("norm.{SQ}"))?;
            let proj = weight("mm.Q4_K")?;
            let pv = dequant(m, "mm.Q4_K");
            let x = randn(&mut rng, ntok * SQ);
            let a0 = randn(&mut rng, ntok * SQ);
            let mut acc = b.tensor_from(&a0, ntok, SQ);
            b.matmul_add(&w, &b.tensor_from(&x, ntok, SQ), &mut acc);
            let h = b.read(&b.rms_norm_into(&acc, &nw, 1e-6));
            let y = b.read(&b.matmul(&proj, &b.tensor_from(&h, ntok, SQ)));
            let r = matmul_ref(&wv, SQ, SQ, &dot_input(ty, &x), ntok);
            let want_acc: Vec<f64> = r.iter().zip(&a0).map(|(r, &a)| r + a as f64).collect();
            out.push(judge(
                format!("{case} residual"),
                &b.read(&acc),
                &want_acc,
                |i| {
                    let (t, row) = (i / SQ, i % SQ);
                    tol.matmul
                        * norm(&wv[row * SQ..(row + 1) * SQ])
                        * norm(&x[t * SQ..(t + 1) * SQ])
                },
            ));
            let r = matmul_ref(&pv, MM_ROWS, SQ, &dot_input(GgmlType::Q4_K, &h), ntok);
            out.push(judge(format!("{case} projected"), &y, &r, |i| {
                let (t, row) = (i / MM_ROWS, i % MM_ROWS);
                tol.matmul * norm(&pv[row * SQ..(row + 1) * SQ]) * norm(&h[t * SQ..(t + 1) * SQ])
            }));
        }
    }

    // The same residual with the next pre-norm fused into it (`matmul_add_norm`; on GPU decode
    // steps matvec_dec's FUSE, whose output holds z = x ⊙ w until something reads it as f32),
    // read by a K-quant projection (which applies the norm's scale itself), an F32 one (an MoE
    // router, the same) and a Q8_0 one (a 32-block quantization of its own), all recorded
    // before any read; then the normed values themselves. Each against the reference.
    for ty in [GgmlType::Q4_K, GgmlType::Q6_K] {
        for ntok in [1usize, 3] {
            let case = format!(
                "residual + fused norm {} rows={SQ} tokens={ntok}",
                ty.name()
            );
            if !want(&case) {
                continue;
            }
            let w = weight(&format!("sq.{}", ty.name()))?;
            let wv = dequant(m, &format!("sq.{}", ty.name()));
            let nw = weight(&format!("norm.{SQ}"))?;
            let nv = dequant(m, &format!("norm.{SQ}"));
            let readers = [
                ("mm.Q4_K", GgmlType::Q4_K),
                ("sqr.F32", GgmlType::F32),
                ("sqr.Q8_0", GgmlType::Q8_0),
            ];
            // The readers' weights first: loading one may record a copy (a staged upload),
            // after which a backend no longer pairs the fused norm's quantization with it.
            // (They also outlive the reads of what was recorded with them.)
            let rws = readers
                .iter()
                .map(|(name, _)| weight(name))
                .collect::<Result<Vec<_>, _>>()?;
            let x = randn(&mut rng, ntok * SQ);
            let a0 = randn(&mut rng, ntok * SQ);
            let mut acc = b.tensor_from(&a0, ntok, SQ);
            let xt = b.tensor_from(&x, ntok, SQ);
            let eps = 1e-6;
            let h = b.matmul_add_norm(&w, &xt, &mut acc, &nw, eps);
            let ys: Vec<_> = rws.iter().map(|rw| b.matmul(rw, &h)).collect();
            let accv = b.read(&acc);
            let r = matmul_ref(&wv, SQ, SQ, &dot_input(ty, &x), ntok);
            let want_acc: Vec<f64> = r.iter().zip(&a0).map(|(r, &a)| r + a as f64).collect();
            out.push(judge(format!("{case} residual"), &accv, &want_acc, |i| {
                let (t, row) = (i / SQ, i % SQ);
                tol.matmul * norm(&wv[row * SQ..(row + 1) * SQ]) * norm(&x[t * SQ..(t + 1) * SQ])
            }));
            for ((name, rty), y) in readers.iter().zip(&ys) {
                let got = b.read(y);
                // The reader's input as read back after it (the norm settled by then).
                let hv = b.read(&h);
                let pv = dequant(m, name);
                let r = matmul_ref(&pv, MM_ROWS, SQ, &dot_input(*rty, &hv), ntok);
                out.push(judge(format!("{case} read by {name}"), &got, &r, |i| {
                    let (t, row) = (i / MM_ROWS, i % MM_ROWS);
                    tol.matmul
                        * norm(&pv[row * SQ..(row + 1) * SQ])
                        * norm(&hv[t * SQ..(t + 1) * SQ])
                }));
            }
            // RMSNorm of the residual as read back, in f64.
            let href: Vec<f64> = accv
                .chunks(SQ)
                .flat_map(|row| {
                    let ms = row.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / SQ as f64;
                    let r = 1.0 / (ms + eps as f64).sqrt();
                    row.iter()
                        .zip(&nv)
                        .map(move |(&v, &g)| v as f64 * r * g as f64)
                })
                .collect();
            out.push(judge(format!("{case} normed"), &b.read(&h), &href, |i| {
                tol.elementwise * href[i].abs().max(1.0)
            }));
        }
    }

    // The fused next pre-norm read by a gated FFN's gate and up with their activation
    // (`matmul_add_norm` then `gate_up_act`; on GPU decode steps the mat-vecs apply the deferred
    // norm's scale to their rows before the activation in their tail): the activation against
    // SwiGLU of the reference products of the normed values as read back.
    for ntok in [1usize, 3] {
        let case =
            format!("residual + fused norm read by gate_up_act Q4_K rows={GLU_FF} tokens={ntok}");
        if !want(&case) {
            continue;
        }
        let w = weight("sq.Q4_K")?;
        let nw = weight(&format!("norm.{SQ}"))?;
        let gw = weight("glu.gate.Q4_K")?;
        let uw = weight("glu.up.Q4_K")?;
        let x = randn(&mut rng, ntok * SQ);
        let a0 = randn(&mut rng, ntok * SQ);
        let mut acc = b.tensor_from(&a0, ntok, SQ);
        let h = b.matmul_add_norm(&w, &b.tensor_from(&x, ntok, SQ), &mut acc, &nw, 1e-6);
        let a = b.gate_up_act(&gw, &uw, &h, GatedAct::SwiGlu);
        let av = b.read(&a);
        let hv = b.read(&h);
        out.push(judge_swiglu(case, &av, m, GgmlType::Q4_K, &hv, ntok, tol));
    }

    // A K-quant MoE decode step with its norms fused (`matmul_add_norm` into the MoE FFN, whose
    // down-projection adds to the residual and fuses the next norm: `moe_ffn_add_norm`; on GPUs
    // the router's mat-vec and the experts' apply the deferred norm's scale, the router routes,
    // the down-projection writes the next norm) against the same step in separate ops on the
    // same backend (each held to the reference above): the residual and both norms.
    for ntok in [1usize, 3] {
        let case = format!("K-quant MoE with fused norms width={KM} tokens={ntok}");
        if !want(&case) {
            continue;
        }
        let [sq, router, gate, up, down, nw] =
            ["sq", "router", "gate", "up", "down", "norm"].map(|n| weight(&format!("kmoe.{n}")));
        let (sq, router, gate, up, down, nw) = (sq?, router?, gate?, up?, down?, nw?);
        let mw = MoeWeights {
            router: &router,
            gate_up: GateUp::Separate {
                gate: &gate,
                up: &up,
            },
            down: &down,
            scales: [None; 3],
            k: 4,
            renorm: true,
            act: GatedAct::SwiGlu,
        };
        let eps = 1e-6;
        let x = randn(&mut rng, ntok * KM);
        let a0 = randn(&mut rng, ntok * KM);
        // Separately.
        let mut acc1 = b.tensor_from(&a0, ntok, KM);
        b.matmul_add(&sq, &b.tensor_from(&x, ntok, KM), &mut acc1);
        let h1 = b.rms_norm_into(&acc1, &nw, eps);
        b.moe_ffn_add(&h1, &mw, &mut acc1);
        let n1 = b.rms_norm_into(&acc1, &nw, eps);
        let (h1v, acc1v, n1v) = (b.read(&h1), b.read(&acc1), b.read(&n1));
        // Fused.
        let mut acc2 = b.tensor_from(&a0, ntok, KM);
        let h2 = b.matmul_add_norm(&sq, &b.tensor_from(&x, ntok, KM), &mut acc2, &nw, eps);
        let n2 = b.moe_ffn_add_norm(&h2, &mw, &mut acc2, &nw, eps);
        let (acc2v, n2v, h2v) = (b.read(&acc2), b.read(&n2), b.read(&h2));
        let row_norm = |v: &[f32], i: usize| norm(&v[(i / KM) * KM..(i / KM + 1) * KM]);
        for (what, got, want) in [
            ("residual", &acc2v, &acc1v),
            ("first norm", &h2v, &h1v),
            ("second norm", &n2v, &n1v),
        ] {
            let want64: Vec<f64> = want.iter().map(|&v| v as f64).collect();
            out.push(judge(format!("{case} {what}"), got, &want64, |i| {
                tol.matmul * row_norm(want, i)
            }));
        }
    }

    // Mixture of experts: separate and fused gate/up, per-expert scales, 1 and 5 tokens.
    // The tied cases' routers tie every expert with a neighbour; the wide ones route more
    // experts than route.glsl's small ranking takes.
    for (fused, scaled, ntok, tied, wide) in [
        (false, false, 1usize, false, false),
        (false, true, 5, false, false),
        (true, true, 5, false, false),
        (true, false, 1, false, false),
        (false, true, 5, true, false),
        (true, false, 1, true, false),
        (false, true, 5, false, true),
        (false, false, 1, true, true),
    ] {
        let (p, ne) = if wide {
            ("moew", N_EXPERT_WIDE)
        } else {
            ("moe", N_EXPERT)
        };
        let case = format!(
            "moe_ffn fused={fused} scales={scaled} tokens={ntok} experts={ne} k=3{}",
            if tied { " tied router" } else { "" }
        );
        if !want(&case) {
            continue;
        }
        let router_name = if tied {
            format!("{p}.router_tied")
        } else {
            format!("{p}.router")
        };
        let router = weight(&router_name)?;
        let gate = weight(&format!("{p}.gate"))?;
        let up = weight(&format!("{p}.up"))?;
        // The wide set has no fused gate/up of its own (its cases are separate).
        let gu = weight("moe.gate_up")?;
        let down = weight(&format!("{p}.down"))?;
        let sc: [Vec<f32>; 3] = [
            (0..ne).map(|i| 0.5 + i as f32 * 0.1).collect(),
            (0..ne).map(|i| 1.5 - i as f32 * 0.1).collect(),
            (0..ne).map(|i| 0.8 + i as f32 * 0.05).collect(),
        ];
        let scales = if scaled {
            [Some(&sc[0][..]), Some(&sc[1][..]), Some(&sc[2][..])]
        } else {
            [None, None, None]
        };
        let mw = MoeWeights {
            router: &router,
            gate_up: if fused {
                GateUp::Fused(&gu)
            } else {
                GateUp::Separate {
                    gate: &gate,
                    up: &up,
                }
            },
            down: &down,
            scales,
            k: 3,
            renorm: true,
            act: GatedAct::SwiGlu,
        };
        let x = randn(&mut rng, ntok * N_EMBD);
        let y = b.read(&b.moe_ffn(&b.tensor_from(&x, ntok, N_EMBD), &mw));
        let (rv, gv, uv, guv, dv) = (
            dequant(m, &router_name),
            dequant(m, &format!("{p}.gate")),
            dequant(m, &format!("{p}.up")),
            dequant(m, "moe.gate_up"),
            dequant(m, &format!("{p}.down")),
        );
        let mut r = vec![0.0f64; ntok * N_EMBD];
        let mut slack = vec![0.0f64; ntok * N_EMBD];
        for t in 0..ntok {
            let xt = &x[t * N_EMBD..(t + 1) * N_EMBD];
            let logits = matmul_ref(&rv, ne, N_EMBD, xt, 1);
            // Gate, up and down are Q8_0/Q4_0: their inputs are seen as Q8_0.
            let xq = dot_input(GgmlType::Q8_0, xt);
            let mx = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let pr: Vec<f64> = logits.iter().map(|l| (l - mx).exp()).collect();
            let z: f64 = pr.iter().sum();
            let mut order: Vec<usize> = (0..ne).collect();
            order.sort_by(|&a, &c| pr[c].total_cmp(&pr[a]).then(a.cmp(&c)));
            let sel = &order[..3];
            let wsum: f64 = sel.iter().map(|&e| pr[e] / z).sum();
            for &e in sel {
                let s = |k: usize| if scaled { sc[k][e] as f64 } else { 1.0 };
                let (g, u) = if fused {
                    let both = matmul_ref(
                        &guv[e * 2 * N_FF * N_EMBD..(e + 1) * 2 * N_FF * N_EMBD],
                        2 * N_FF,
                        N_EMBD,
                        &xq,
                        1,
                    );
                    (
                        both[..N_FF].iter().map(|v| v * s(0)).collect::<Vec<_>>(),
                        both[N_FF..].iter().map(|v| v * s(1)).collect::<Vec<_>>(),
                    )
                } else {
                    (
                        matmul_ref(
                            &gv[e * N_FF * N_EMBD..(e + 1) * N_FF * N_EMBD],
                            N_FF,
                            N_EMBD,
                            &xq,
                            1,
                        )
                        .iter()
                        .map(|v| v * s(0))
                        .collect(),
                        matmul_ref(
                            &uv[e * N_FF * N_EMBD..(e + 1) * N_FF * N_EMBD],
                            N_FF,
                            N_EMBD,
                            &xq,
                            1,
                        )
                        .iter()
                        .map(|v| v * s(1))
                        .collect(),
                    )
                };
                let a: Vec<f32> = g
                    .iter()
                    .zip(&u)
                    .map(|(&g, &u)| (g / (1.0 + (-g).exp()) * u) as f32)
                    .collect();
                let d = matmul_ref(
                    &dv[e * N_EMBD * N_FF..(e + 1) * N_EMBD * N_FF],
                    N_EMBD,
                    N_FF,
                    &dot_input(GgmlType::Q8_0, &a),
                    1,
                );
                // The backend computes `a` in f32 (with its own exp), so an element sitting on
                // an 8-bit rounding boundary may round the other way: allow one such step of
                // `a` per expert, in the block where it would matter most.
                let down = &dv[e * N_EMBD * N_FF..(e + 1) * N_EMBD * N_FF];
                for c in 0..N_EMBD {
                    r[t * N_EMBD + c] += pr[e] / z / wsum * d[c] * s(2);
                    let row = &down[c * N_FF..(c + 1) * N_FF];
                    let steps: f64 = a
                        .chunks(32)
                        .zip(row.chunks(32))
                        .map(|(ab, wb)| {
                            let amax = ab.iter().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
                            let wmax = wb.iter().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
                            amax / 127.0 * wmax
                        })
                        .fold(0.0, f64::max);
                    slack[t * N_EMBD + c] += pr[e] / z / wsum * steps * s(2).abs();
                }
            }
        }
        // Three chained projections: bound by the output's scale, plus the rounding slack of
        // the activation between them.
        let rmax = r.iter().fold(0.0f64, |m, &v| m.max(v.abs()));
        out.push(judge(case.clone(), &y, &r, |i| {
            5.0 * tol.matmul * rmax + slack[i]
        }));
        // Added to a residual stream: the same numbers as moe_ffn then add.
        let res = randn(&mut rng, ntok * N_EMBD);
        let mut acc = b.tensor_from(&res, ntok, N_EMBD);
        b.moe_ffn_add(&b.tensor_from(&x, ntok, N_EMBD), &mw, &mut acc);
        let want: Vec<f64> = res.iter().zip(&y).map(|(&a, &v)| (a + v) as f64).collect();
        out.push(judge(format!("{case} added"), &b.read(&acc), &want, |_| {
            0.0
        }));
    }
    Ok(out)
}
