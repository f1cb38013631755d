#!/usr/bin/env python3
"""Literal numpy emulation of crates/zinc-vulkan/shaders/attn_dec_cm.comp (review aid).

Written in session 45, a review before the kernel ever ran on a GPU, for its first form
(subgroups with their own softmax) as the shader stood then. It mirrors the shader by hand: a
change to the shader needs the same change here. `python3 scripts/emulate/attn_dec_cm.py
[quick]` prints a line a case, then ALL PASS or SOME FAIL.

Shared arrays are flat numpy arrays of 4-vectors with the shader's strides (vector units);
coopMatLoad/Store take an element offset and a stride in vector units; an accumulator's
per-lane elements use a random (opaque) mapping, so the "row numbers" trick is tested
independently of the real layout. Subgroups run one after another, lanes as loops/arrays.
Partials are compared with a float64 reference, per slice, and after attn_combine's merge.
"""
import sys
import numpy as np
from attn_ref import NEG_BIG, check_merged, check_slice, f16, f32, make_case, new_kv, slice_of
KB, NSG = 16, 4
RNG = np.random.default_rng(1234)


def unpack2x16(u):  # uint32 -> 2 f16 (low half first)
    return np.array([u], dtype=np.uint32).view(np.float16)


def cm_load(buf, element, stride, layout):
    """buf: (N,4) array of 4-vectors; returns a 16x16 matrix (component type of buf).
    Row major: M[i][j] = comp[(element + i*stride)*4 + j]; column major: M[i][j] =
    comp[(element + j*stride)*4 + i]."""
    flat = buf.reshape(-1)
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    if layout == "row":
        idx = (element + i * stride) * 4 + j
    else:
        idx = (element + j * stride) * 4 + i
    assert idx.max() < flat.size
    return flat[idx].copy()


def cm_store_row(M, buf, element, stride):
    flat = buf.reshape(-1)
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    idx = (element + i * stride) * 4 + j
    assert idx.max() < flat.size
    flat[idx] = M


def cm_muladd(A, B, C):
    return (A.astype(f32) @ B.astype(f32) + C).astype(f32)


class Shader:
    def __init__(self, HD, G):
        self.HD, self.G = HD, G
        self.LDT = (HD + 8) // 4
        self.DC = HD // 16
        self.LDS = (KB + 4) // 4
        self.LDP = (KB + 8) // 4
        self.QPK = HD // 8
        self.NQ = KB * self.QPK // 32
        # opaque lane <-> element mapping of an accumulator (same for every CM_C)
        self.perm = RNG.permutation(256)

    # ---- fetch / put (per lane) ----
    def fetch(self, quads, kv_dim, begin, j0, n, kvh, lane):
        r = []
        for i in range(self.NQ):
            v = lane + 32 * i
            j = j0 + v // self.QPK
            if j < n:
                idx = ((begin + j) * kv_dim + kvh * self.HD) // 8 + v % self.QPK
                assert ((begin + j) * kv_dim + kvh * self.HD) % 8 == 0
                r.append(quads[idx].copy())
            else:
                r.append(np.zeros(4, np.uint32))
        return r

    def put(self, T, tb, r, j0, inew, is_v, lane, kn, vn):
        for i in range(self.NQ):
            v = lane + 32 * i
            key, piece = v // self.QPK, v % self.QPK
            x = r[i]
            if kn is not None and j0 + key == inew:
                e = 4 * piece
                src = vn if is_v else kn
                x = np.array([src[e], src[e + 1], src[e + 2], src[e + 3]], np.uint32)
            at = tb + key * self.LDT + 2 * piece
            T[at] = np.concatenate([unpack2x16(x[0]), unpack2x16(x[1])])
            T[at + 1] = np.concatenate([unpack2x16(x[2]), unpack2x16(x[3])])

    # ---- one workgroup ----
    def workgroup(self, pc, w, t, sp, nsplit, kn=None, vn=None):
        HD, G, LDT, DC, LDS, LDP = self.HD, self.G, self.LDT, self.DC, self.LDS, self.LDP
        Qh = np.zeros((16 * LDT, 4), f16)
        Ql = np.zeros((16 * LDT, 4), f16)
        T = np.full((NSG * KB * LDT, 4), np.nan, f16)  # garbage where never written
        Ss = np.full((NSG * 16 * LDS, 4), np.nan, f32)
        Ph = np.full((NSG * 16 * LDP, 4), np.nan, f16)
        Pl = np.full((NSG * 16 * LDP, 4), np.nan, f16)
        Al = np.full(NSG * 16, np.nan, f32)
        Mx = np.full(NSG * 16, np.nan, f32)
        Lx = np.full(NSG * 16, np.nan, f32)
        qs = np.zeros(G * HD, f32)

        h0 = w * G
        kvh = h0 // pc["group"]
        p = pc["pos"][t]
        begin, n = slice_of(pc, t, sp)
        end = begin + n
        kv_dim = pc["n_head_kv"] * HD
        k4, v4 = pc["kc"], pc["vc"]

        kr = [self.fetch(k4, kv_dim, begin, KB * sg, n, kvh, lane) for sg in range(NSG) for lane in range(32)]
        vr = [self.fetch(v4, kv_dim, begin, KB * sg, n, kvh, lane) for sg in range(NSG) for lane in range(32)]

        if kn is not None:  # PREP: queries made in shared memory (here: given), the new key/value
            has_new = begin <= p < end
            inew = p - begin if has_new else 0xFFFFFFFF
            qbase = (t * pc["n_head"] + h0) * HD
            qs[:] = pc["q"][qbase:qbase + G * HD]
        else:
            inew = 0xFFFFFFFF
            qbase = (t * pc["n_head"] + h0) * HD
            for i in range(G * HD):
                qs[i] = pc["q"][qbase + i]
        # queries as 16 rows of hi + lo
        for i in range(16 * HD // 4):
            r, d = i // (HD // 4), 4 * (i % (HD // 4))
            v = np.zeros(4, f32)
            if r < G:
                v = qs[r * HD + d:r * HD + d + 4].copy()
            hi = v.astype(f16)
            Qh[r * LDT + d // 4] = hi
            Ql[r * LDT + d // 4] = (v - hi.astype(f32)).astype(f16)
        for sg in range(NSG):
            sbase = sg * 16 * LDS
            for i in range(32):
                for ii in (i, i + 32):
                    Ss[sbase + (ii // 4) * LDS + ii % 4] = f32(ii // 4)
        # ---- barrier ----
        state = []
        for sg in range(NSG):  # each subgroup's loop (no workgroup barrier inside)
            sbase = sg * 16 * LDS
            rows = cm_load(Ss, sbase, LDS, "row").reshape(-1)[self.perm].reshape(32, 8)
            lanes = np.arange(32)
            my_row, half_ = lanes // 2, lanes % 2
            m = np.full(32, NEG_BIG, f32)
            l = np.zeros(32, f32)
            acc = [np.zeros((16, 16), f32) for _ in range(DC)]
            tb = sg * KB * LDT
            pbase = sg * 16 * LDP
            krs = kr[sg * 32:(sg + 1) * 32]
            vrs = vr[sg * 32:(sg + 1) * 32]
            j0 = KB * sg
            while j0 < n:
                jn = j0 + KB * NSG
                for lane in range(32):
                    self.put(T, tb, krs[lane], j0, inew, False, lane, kn, vn)
                if jn < n:
                    krs = [self.fetch(k4, kv_dim, begin, jn, n, kvh, lane) for lane in range(32)]
                s = np.zeros((16, 16), f32)
                for c in range(DC):
                    kt = cm_load(T, tb + 4 * c, LDT, "col")
                    qa = cm_load(Qh, 4 * c, LDT, "row")
                    s = cm_muladd(qa, kt, s)
                    qa = cm_load(Ql, 4 * c, LDT, "row")
                    s = cm_muladd(qa, kt, s)
                cm_store_row(s, Ss, sbase, LDS)
                for lane in range(32):
                    self.put(T, tb, vrs[lane], j0, inew, True, lane, kn, vn)
                if jn < n:
                    vrs = [self.fetch(v4, kv_dim, begin, jn, n, kvh, lane) for lane in range(32)]
                bm = np.full(32, NEG_BIG, f32)
                svs = []
                for lane in range(32):
                    sv = []
                    for q in range(2):
                        x = (Ss[sbase + my_row[lane] * LDS + 2 * half_[lane] + q] * f32(pc["scale"])).astype(f32)
                        for e in range(4):
                            in_ = my_row[lane] < G and j0 + 8 * half_[lane] + 4 * q + e < n
                            x[e] = x[e] if in_ else NEG_BIG
                            bm[lane] = max(bm[lane], x[e])
                        sv.append(x)
                    svs.append(sv)
                bm = np.maximum(bm, bm[lanes ^ 1])
                mn = np.maximum(m, bm)
                with np.errstate(over="ignore"):
                    alpha = np.exp((m - mn).astype(f32)).astype(f32)
                m = mn
                bs = np.zeros(32, f32)
                for lane in range(32):
                    for q in range(2):
                        wq = np.zeros(4, f32)
                        for e in range(4):
                            x = svs[lane][q][e]
                            wq[e] = np.exp(min(f32(x - mn[lane]), f32(0.0))) if x > NEG_BIG else f32(0.0)
                        bs[lane] = f32(bs[lane] + f32(f32(wq[0] + wq[1]) + f32(wq[2] + wq[3])))
                        wh = wq.astype(f16)
                        Ph[pbase + my_row[lane] * LDP + 2 * half_[lane] + q] = wh
                        Pl[pbase + my_row[lane] * LDP + 2 * half_[lane] + q] = (wq - wh.astype(f32)).astype(f16)
                l = (l * alpha + bs + bs[lanes ^ 1]).astype(f32)
                for lane in range(32):
                    if half_[lane] == 0:
                        Al[sg * 16 + my_row[lane]] = alpha[lane]
                for c in range(DC):
                    af = acc[c].reshape(-1)
                    for lane in range(32):
                        for i in range(8):
                            a = Al[sg * 16 + int(rows[lane, i])]
                            af[self.perm[lane * 8 + i]] *= a
                ph = cm_load(Ph, pbase, LDP, "row")
                pl = cm_load(Pl, pbase, LDP, "row")
                for c in range(DC):
                    vt = cm_load(T, tb + 4 * c, LDT, "row")
                    acc[c] = cm_muladd(ph, vt, acc[c])
                    acc[c] = cm_muladd(pl, vt, acc[c])
                j0 += KB * NSG
            state.append((rows, m, l, acc))
        # ---- the subgroups meet ----
        for sg in range(NSG):
            rows, m, l, acc = state[sg]
            for lane in range(32):
                if lane % 2 == 0:
                    Mx[sg * 16 + lane // 2] = m[lane]
                    Lx[sg * 16 + lane // 2] = l[lane]
        # ---- barrier ----
        part = pc["part"]
        for sg in range(NSG):
            rows, m, l, acc = state[sg]
            for lane in range(32):
                my_row, half_ = lane // 2, lane % 2
                big = NEG_BIG
                for k in range(NSG):
                    big = max(big, Mx[k * 16 + my_row])
                if half_ == 0:
                    with np.errstate(over="ignore"):
                        Al[sg * 16 + my_row] = np.exp(f32(m[lane] - big))
                if sg == 0 and half_ == 0 and my_row < G:
                    lsum = f32(0.0)
                    for k in range(NSG):
                        with np.errstate(over="ignore"):
                            lsum = f32(lsum + Lx[k * 16 + my_row] * np.exp(f32(Mx[k * 16 + my_row] - big)))
                    ob = ((t * pc["n_head"] + h0 + my_row) * nsplit + sp) * (HD + 2)
                    part[ob] = big if n > 0 else NEG_BIG
                    part[ob + 1] = lsum if n > 0 else 0.0
        for sg in range(NSG):
            rows, m, l, acc = state[sg]
            for c in range(DC):
                af = acc[c].reshape(-1)
                for lane in range(32):
                    for i in range(8):
                        af[self.perm[lane * 8 + i]] *= Al[sg * 16 + int(rows[lane, i])]
        for c in range(DC):
            for sg in range(NSG):
                cm_store_row(state[sg][3][c], Ss, sg * 16 * LDS, LDS)
            # ---- barrier ----
            for tid in range(G * 16):
                r, col = tid // 16, tid % 16
                a = f32(0.0)
                for k in range(NSG):
                    a = f32(a + Ss[k * 16 * LDS + r * LDS + col // 4][col % 4])
                ob = ((t * pc["n_head"] + h0 + r) * nsplit + sp) * (HD + 2)
                part[ob + 2 + 16 * c + col] = a
            # ---- barrier ----
        return begin, n, inew


def run_case(HD, G, n_head_kv, p, split_len, window=0, prep=False, seed=0):
    pc, Kref, Vref, q, scale, lo, nsplit = make_case(HD, G, n_head_kv, p, split_len, window,
                                                     prep, seed, past=40)
    sh = Shader(HD, G)
    worst = 0.0
    for w in range(pc["n_head"] // G):
        for sp in range(nsplit):
            kn, vn = new_kv(Kref, Vref, p, w, HD) if prep else (None, None)
            begin, n, inew = sh.workgroup(pc, w, 0, sp, nsplit, kn, vn)
            msg, wst = check_slice(pc, Kref, Vref, q, scale, HD, G, w, sp, nsplit, begin, n)
            worst = max(worst, wst)
            if msg:
                print(f"FAIL HD={HD} G={G} p={p} sl={split_len}: {msg}")
                return False, worst
    msg, wst = check_merged(pc, Kref, Vref, q, scale, HD, G, nsplit, lo, p)
    if msg:
        print(f"FAIL HD={HD} G={G} p={p}: {msg}")
    return msg is None, max(worst, wst)


if __name__ == "__main__":
    cases = []
    for HD in (32, 64, 128):
        for G in (1, 2, 4, 8):
            # (p, split_len, window): slice lengths incl. n=1, n<16, n%16!=0, n=300 and n=0-free
            for p, sl, win in ((0, 32, 0), (6, 32, 0), (40, 32, 0), (299, 1024, 0), (299, 96, 0),
                               (200, 64, 50), (130, 48, 0)):
                for prep in (False, True):
                    if HD == 128 and G == 8 and p == 299 and sl == 1024 and prep:
                        pass
                    cases.append((HD, G, p, sl, win, prep))
    if len(sys.argv) > 1 and sys.argv[1] == "quick":
        cases = cases[::7]
    ok_all, worst_all = True, 0.0
    for i, (HD, G, p, sl, win, prep) in enumerate(cases):
        n_head_kv = 2 if G <= 4 else 1
        ok, worst = run_case(HD, G, n_head_kv, p, sl, win, prep, seed=i)
        worst_all = max(worst_all, worst)
        ok_all &= ok
        print(f"HD={HD:3d} G={G} p={p:3d} split={sl:4d} win={win:2d} prep={int(prep)}: "
              f"{'ok' if ok else 'FAIL'} worst rel err {worst:.2e}", flush=True)
    print("ALL PASS" if ok_all else "SOME FAIL", f"worst {worst_all:.2e}")
