//! Dot products of a quantized weight row with an activation row, as llama.cpp computes them:
//! the activation is first quantized to the weight format's partner type (`vec_dot_type`:
//! Q8_0, Q8_1 or Q8_K), then products are summed as integers per block and scaled once.
//! Layouts: `ARCHITECTURES.md §11`.
//!
//! Every function here is `#[inline(always)]` so that `super::kernels` can compile the same code
//! once for the baseline target and once with AVX2 enabled, and LLVM vectorizes both.
// Kernel loops walk several arrays in lockstep by index; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use half::f16;
use zinc_gguf::GgmlType;

const QK: usize = 256;

#[inline(always)]
fn f16_at(b: &[u8], at: usize) -> f32 {
    f16::from_bits(u16::from_le_bytes([b[at], b[at + 1]])).to_f32()
}

/// The activation format a weight type is dotted against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActKind {
    F32,
    F16,
    Bf16,
    Q8_0,
    Q8_1,
    Q8K,
}

pub fn act_kind(ty: GgmlType) -> Option<ActKind> {
    use GgmlType as T;
    Some(match ty {
        T::F32 => ActKind::F32,
        T::F16 => ActKind::F16,
        T::BF16 => ActKind::Bf16,
        T::Q4_0 | T::Q5_0 | T::Q8_0 | T::IQ4_NL | T::MXFP4 => ActKind::Q8_0,
        T::Q4_1 | T::Q5_1 => ActKind::Q8_1,
        T::Q2_K | T::Q3_K | T::Q4_K | T::Q5_K | T::Q6_K | T::IQ4_XS => ActKind::Q8K,
        _ => return None,
    })
}

#[derive(Clone, Copy)]
pub struct BlockQ8 {
    /// Scale (f16-rounded, as ggml stores it).
    pub d: f32,
    /// `d · Σ qs` (Q8_1 only).
    pub s: f32,
    pub qs: [i8; 32],
}

#[derive(Clone, Copy)]
pub struct BlockQ8K {
    pub d: f32,
    pub qs: [i8; QK],
    pub bsums: [i16; 16],
}

/// One activation row in its partner format.
pub enum ActRow {
    F32(Vec<f32>),
    /// f16 or bf16 values widened back to f32 (exact), so the dot is plain f32.
    Rounded(Vec<f32>),
    Q8(Vec<BlockQ8>),
    Q8K(Vec<BlockQ8K>),
}

/// Round half to even without a libm call: adding 1.5·2^23 pushes the fraction out of an f32
/// under the default rounding mode (|v| ≤ 127 here, far inside the valid range).
#[inline(always)]
fn round_even(v: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (v + MAGIC) - MAGIC
}

/// Quantizes one activation row (`x.len()` a multiple of the block size).
#[inline(always)]
pub fn quantize_act(kind: ActKind, x: &[f32]) -> ActRow {
    match kind {
        ActKind::F32 => ActRow::F32(x.to_vec()),
        ActKind::F16 => ActRow::Rounded(x.iter().map(|&v| f16::from_f32(v).to_f32()).collect()),
        ActKind::Bf16 => ActRow::Rounded(
            x.iter()
                .map(|&v| f32::from_bits((zinc_quant::f32_to_bf16(v) as u32) << 16))
                .collect(),
        ),
        ActKind::Q8_0 | ActKind::Q8_1 => ActRow::Q8(
            x.chunks_exact(32)
                .map(|b| {
                    let amax = b.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                    let d = amax / 127.0;
                    let id = if amax != 0.0 { 127.0 / amax } else { 0.0 };
                    let mut qs = [0i8; 32];
                    let mut sum = 0i32;
                    for (q, &v) in qs.iter_mut().zip(b) {
                        *q = round_even(v * id) as i8;
                        sum += *q as i32;
                    }
                    let d = f16::from_f32(d).to_f32();
                    BlockQ8 {
                        d,
                        s: f16::from_f32(d * sum as f32).to_f32(),
                        qs,
                    }
                })
                .collect(),
        ),
        ActKind::Q8K => ActRow::Q8K(
            x.chunks_exact(QK)
                .map(|b| {
                    let mut max = 0.0f32;
                    for &v in b {
                        if v.abs() > max.abs() {
                            max = v;
                        }
                    }
                    let mut blk = BlockQ8K {
                        d: 0.0,
                        qs: [0; QK],
                        bsums: [0; 16],
                    };
                    if max != 0.0 {
                        let iscale = -127.0 / max;
                        for (q, &v) in blk.qs.iter_mut().zip(b) {
                            *q = (round_even(iscale * v) as i32).min(127) as i8;
                        }
                        for (g, s) in blk.bsums.iter_mut().enumerate() {
                            *s = blk.qs[16 * g..16 * g + 16].iter().map(|&q| q as i16).sum();
                        }
                        blk.d = 1.0 / iscale;
                    }
                    blk
                })
                .collect(),
        ),
    }
}

/// Unpacks 16 bytes of nibbles: low nibbles are elements 0..16, high nibbles 16..32.
#[inline(always)]
fn nibbles(qs: &[u8], offset: i8) -> [i8; 32] {
    let mut q = [0i8; 32];
    for j in 0..16 {
        q[j] = (qs[j] & 15) as i8 - offset;
        q[j + 16] = (qs[j] >> 4) as i8 - offset;
    }
    q
}

use zinc_quant::{IQ4_LEVELS, MXFP4_LEVELS};

#[inline(always)]
fn table_nibbles(qs: &[u8], table: &[i8; 16]) -> [i8; 32] {
    let mut q = [0i8; 32];
    for j in 0..16 {
        q[j] = table[(qs[j] & 15) as usize];
        q[j + 16] = table[(qs[j] >> 4) as usize];
    }
    q
}

/// A weight row unpacked once into integers and scales, so that a batch of tokens reuses it: the
/// per-token work is then a plain `i8 × i8` dot per group, which vectorizes.
pub enum Unpacked {
    /// F32/F16/BF16 weights as f32.
    Float(Vec<f32>),
    /// 32-element blocks: `Σ_b (d_b·dx_b)·Σ q·qx  (+ m_b·sx_b)`.
    Blocks {
        q: Vec<i8>,
        d: Vec<f32>,
        m: Vec<f32>,
    },
    /// 256-element super-blocks of 16-element groups with integer scales and mins:
    /// `Σ_sb dx·(d·Σ_g sc_g·Σ q·qx − dmin·Σ_g mn_g·bsum_g)`.
    Super {
        q: Vec<i8>,
        sc: Vec<i32>,
        mn: Vec<i32>,
        d: Vec<f32>,
        dmin: Vec<f32>,
    },
}

impl Unpacked {
    pub fn new() -> Unpacked {
        Unpacked::Float(Vec::new())
    }
}

fn take_float(u: &mut Unpacked) -> Vec<f32> {
    match std::mem::replace(u, Unpacked::Float(Vec::new())) {
        Unpacked::Float(v) => v,
        _ => Vec::new(),
    }
}

fn take_blocks(u: &mut Unpacked) -> (Vec<i8>, Vec<f32>, Vec<f32>) {
    match std::mem::replace(u, Unpacked::Float(Vec::new())) {
        Unpacked::Blocks { q, d, m } => (q, d, m),
        _ => (Vec::new(), Vec::new(), Vec::new()),
    }
}

#[allow(clippy::type_complexity)]
fn take_super(u: &mut Unpacked) -> (Vec<i8>, Vec<i32>, Vec<i32>, Vec<f32>, Vec<f32>) {
    match std::mem::replace(u, Unpacked::Float(Vec::new())) {
        Unpacked::Super { q, sc, mn, d, dmin } => (q, sc, mn, d, dmin),
        _ => (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()),
    }
}

/// Unpacks one weight row of `ty` into `u` (buffers are reused between rows).
#[inline(always)]
pub fn unpack(ty: GgmlType, row: &[u8], u: &mut Unpacked) {
    use GgmlType as T;
    match ty {
        T::F32 | T::F16 | T::BF16 => {
            let mut v = take_float(u);
            v.clear();
            match ty {
                T::F32 => v.extend(
                    row.chunks_exact(4)
                        .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]])),
                ),
                T::F16 => v.extend(
                    row.chunks_exact(2)
                        .map(|w| f16::from_bits(u16::from_le_bytes([w[0], w[1]])).to_f32()),
                ),
                _ => v.extend(
                    row.chunks_exact(2)
                        .map(|w| f32::from_bits((u16::from_le_bytes([w[0], w[1]]) as u32) << 16)),
                ),
            }
            *u = Unpacked::Float(v);
        }
        T::Q4_0 | T::Q4_1 | T::Q5_0 | T::Q5_1 | T::Q8_0 | T::IQ4_NL | T::MXFP4 => {
            let (mut q, mut d, mut m) = take_blocks(u);
            q.clear();
            d.clear();
            m.clear();
            let size = ty.type_size();
            for b in row.chunks_exact(size) {
                let block: [i8; 32] = match ty {
                    T::Q4_0 => nibbles(&b[2..18], 8),
                    T::Q4_1 => nibbles(&b[4..20], 0),
                    T::Q5_0 | T::Q5_1 => {
                        let (qh_at, qs_at, off) =
                            if ty == T::Q5_0 { (2, 6, 16) } else { (4, 8, 0) };
                        let qh = u32::from_le_bytes([
                            b[qh_at],
                            b[qh_at + 1],
                            b[qh_at + 2],
                            b[qh_at + 3],
                        ]);
                        let mut v = nibbles(&b[qs_at..qs_at + 16], 0);
                        for (j, x) in v.iter_mut().enumerate() {
                            *x = (*x | ((((qh >> j) & 1) as i8) << 4)) - off;
                        }
                        v
                    }
                    T::Q8_0 => {
                        let mut v = [0i8; 32];
                        for j in 0..32 {
                            v[j] = b[2 + j] as i8;
                        }
                        v
                    }
                    T::IQ4_NL => table_nibbles(&b[2..18], &IQ4_LEVELS),
                    _ => table_nibbles(&b[1..17], &MXFP4_LEVELS),
                };
                q.extend_from_slice(&block);
                match ty {
                    T::MXFP4 => d.push(zinc_quant::e8m0_to_f32_half(b[0])),
                    _ => d.push(f16_at(b, 0)),
                }
                if matches!(ty, T::Q4_1 | T::Q5_1) {
                    m.push(f16_at(b, 2));
                }
            }
            *u = Unpacked::Blocks { q, d, m };
        }
        _ => {
            let (mut q, mut sc, mut mn, mut d, mut dmin) = take_super(u);
            q.clear();
            sc.clear();
            mn.clear();
            d.clear();
            dmin.clear();
            for b in row.chunks_exact(ty.type_size()) {
                let start = q.len();
                q.resize(start + QK, 0);
                let qq = &mut q[start..];
                match ty {
                    T::Q4_K | T::Q5_K => {
                        let (s, m) = zinc_quant::scale_min_k4_all(&b[4..16]);
                        let (qh, qs) = if ty == T::Q5_K {
                            (Some(&b[16..48]), &b[48..176])
                        } else {
                            (None, &b[16..144])
                        };
                        for c in 0..4 {
                            for l in 0..32 {
                                let (mut lo, mut hi) = (qs[32 * c + l] & 15, qs[32 * c + l] >> 4);
                                if let Some(qh) = qh {
                                    lo |= ((qh[l] >> (2 * c)) & 1) << 4;
                                    hi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
                                }
                                qq[64 * c + l] = lo as i8;
                                qq[64 * c + 32 + l] = hi as i8;
                            }
                        }
                        for j in 0..8 {
                            sc.extend([s[j] as i32; 2]);
                            mn.extend([m[j] as i32; 2]);
                        }
                        d.push(f16_at(b, 0));
                        dmin.push(f16_at(b, 2));
                    }
                    T::Q6_K => {
                        let (ql, qh, s) = (&b[0..128], &b[128..192], &b[192..208]);
                        for h in 0..2 {
                            for l in 0..32 {
                                let (a, c, hb) =
                                    (ql[64 * h + l], ql[64 * h + l + 32], qh[32 * h + l]);
                                qq[128 * h + l] = ((a & 15) | ((hb & 3) << 4)) as i8 - 32;
                                qq[128 * h + 32 + l] =
                                    ((c & 15) | (((hb >> 2) & 3) << 4)) as i8 - 32;
                                qq[128 * h + 64 + l] =
                                    ((a >> 4) | (((hb >> 4) & 3) << 4)) as i8 - 32;
                                qq[128 * h + 96 + l] =
                                    ((c >> 4) | (((hb >> 6) & 3) << 4)) as i8 - 32;
                            }
                        }
                        sc.extend(s.iter().map(|&v| (v as i8) as i32));
                        mn.extend([0; 16]);
                        d.push(f16_at(b, 208));
                        dmin.push(0.0);
                    }
                    T::Q3_K => {
                        let (hmask, qs, sb) = (&b[0..32], &b[32..96], &b[96..108]);
                        for (e, v) in qq.iter_mut().enumerate() {
                            let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
                            let q2 = ((qs[32 * h + l] >> (2 * j)) & 3) as i8;
                            *v = q2
                                - if (hmask[l] >> (e / 32)) & 1 == 1 {
                                    0
                                } else {
                                    4
                                };
                        }
                        for g in 0..16 {
                            let lo = if g < 8 { sb[g] & 15 } else { sb[g - 8] >> 4 };
                            let hi = (sb[8 + g % 4] >> (2 * (g / 4))) & 3;
                            sc.push((lo | (hi << 4)) as i32 - 32);
                        }
                        mn.extend([0; 16]);
                        d.push(f16_at(b, 108));
                        dmin.push(0.0);
                    }
                    T::Q2_K => {
                        let (s, qs) = (&b[0..16], &b[16..80]);
                        for (e, v) in qq.iter_mut().enumerate() {
                            let (h, j, l) = (e / 128, (e % 128) / 32, e % 32);
                            *v = ((qs[32 * h + l] >> (2 * j)) & 3) as i8;
                        }
                        sc.extend(s.iter().map(|&v| (v & 15) as i32));
                        mn.extend(s.iter().map(|&v| (v >> 4) as i32));
                        d.push(f16_at(b, 80));
                        dmin.push(f16_at(b, 82));
                    }
                    _ => {
                        // IQ4_XS
                        let scales_h = u16::from_le_bytes([b[2], b[3]]);
                        for ib in 0..8 {
                            let ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 15)
                                | ((((scales_h >> (2 * ib)) & 3) as u8) << 4);
                            let v = table_nibbles(&b[8 + 16 * ib..8 + 16 * ib + 16], &IQ4_LEVELS);
                            qq[32 * ib..32 * ib + 32].copy_from_slice(&v);
                            sc.extend([ls as i32 - 32; 2]);
                        }
                        mn.extend([0; 16]);
                        d.push(f16_at(b, 0));
                        dmin.push(0.0);
                    }
                }
            }
            *u = Unpacked::Super { q, sc, mn, d, dmin };
        }
    }
}

#[inline(always)]
fn isum16(a: &[i8], b: &[i8]) -> i32 {
    let (a, b): (&[i8; 16], &[i8; 16]) = (a.try_into().expect("16"), b.try_into().expect("16"));
    let mut s = 0i32;
    for j in 0..16 {
        s += a[j] as i32 * b[j] as i32;
    }
    s
}

/// `row · act` for an unpacked row.
#[inline(always)]
pub fn dot_unpacked(u: &Unpacked, act: &ActRow) -> f32 {
    match (u, act) {
        (Unpacked::Float(w), ActRow::F32(x) | ActRow::Rounded(x)) => {
            // Eight partial sums so the loop vectorizes.
            let mut acc = [0.0f32; 8];
            let (wc, xc) = (w.chunks_exact(8), x.chunks_exact(8));
            let (wr, xr) = (wc.remainder(), xc.remainder());
            for (a, b) in wc.zip(xc) {
                for k in 0..8 {
                    acc[k] += a[k] * b[k];
                }
            }
            let mut s: f32 = acc.iter().sum();
            for (a, b) in wr.iter().zip(xr) {
                s += a * b;
            }
            s
        }
        (Unpacked::Blocks { q, d, m }, ActRow::Q8(x)) => {
            let mut s = 0.0f32;
            for (i, y) in x.iter().enumerate() {
                let qb = &q[32 * i..32 * i + 32];
                let sumi = isum16(&qb[..16], &y.qs[..16]) + isum16(&qb[16..], &y.qs[16..]);
                s += (d[i] * y.d) * sumi as f32;
                if !m.is_empty() {
                    s += m[i] * y.s;
                }
            }
            s
        }
        (Unpacked::Super { q, sc, mn, d, dmin }, ActRow::Q8K(x)) => {
            let mut s = 0.0f32;
            for (i, y) in x.iter().enumerate() {
                let qb = &q[QK * i..QK * (i + 1)];
                let (scb, mnb) = (&sc[16 * i..16 * (i + 1)], &mn[16 * i..16 * (i + 1)]);
                let mut sumi = 0i32;
                let mut mins = 0i32;
                for g in 0..16 {
                    sumi += scb[g] * isum16(&qb[16 * g..16 * g + 16], &y.qs[16 * g..16 * g + 16]);
                    mins += mnb[g] * y.bsums[g] as i32;
                }
                s += d[i] * y.d * sumi as f32 - dmin[i] * y.d * mins as f32;
            }
            s
        }
        // `act_kind` pairs every supported type with its partner, and weights of other types are
        // refused when loaded, so no other pair can reach here.
        _ => unreachable!("weight row dotted with an activation of the wrong kind"),
    }
}
