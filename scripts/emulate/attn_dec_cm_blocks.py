#!/usr/bin/env python3
"""Literal numpy emulation of attn_dec_cm.comp's BLOCKS form (`#define BLOCKS 1`).

Written in session 45, a review before the kernel ever ran on a GPU, for its BLOCKS form as the
shader stood then. It mirrors the shader by hand: a change to the shader needs the same change
here. `python3 scripts/emulate/attn_dec_cm_blocks.py [quick]` prints a line a case, then ALL
PASS or SOME FAIL.

Shared arrays are flat numpy arrays with the shader's strides (vector units for the vec4 /
f16vec4 arrays); coopMatLoad/Store take an element offset and a stride in vector units; an
accumulator's per-lane elements use a random (opaque) lane mapping. 128 invocations =
4 subgroups x 32 lanes (gl_SubgroupInvocationID = tid % 32), subgroup shuffles literal.
Workgroup phases run between barrier() calls, subgroups in a random order each phase, and a
race checker flags any shared component touched by two subgroups in one barrier interval
(write/write, read-after-write, write-after-read), or by two lanes of a subgroup (or a lane
and a cooperative op) without a subgroupBarrier between; reads of never-written components
fail too. Every partial must be written exactly once by its workgroup.
"""
import sys
import numpy as np
from attn_ref import NEG_BIG, check_merged, check_slice, f16, f32, make_case, new_kv, slice_of, to_words
NSG, WG = 4, 128
KB, LANES, NT = 64, 128, 1
RNG = np.random.default_rng(4321)


class Race(Exception):
    pass


class Ctx:
    """Barrier epochs: `ep` (workgroup barriers), `sub[sg]` (subgroup barriers; a workgroup
    barrier also advances every subgroup's)."""

    def __init__(self):
        self.ep = 0
        self.sub = [0] * NSG
        self.subc = 0

    def barrier(self):
        self.ep += 1
        self.subc += 1
        self.sub = [self.subc] * NSG

    def subgroup_barrier(self, sg):
        self.subc += 1
        self.sub[sg] = self.subc


class Sh:
    """A shared array of n vectors of `width` components."""

    def __init__(self, ctx, name, n, width, dtype):
        self.ctx, self.name, self.width = ctx, name, width
        self.d = np.full(n * width, np.nan if dtype != np.uint32 else 0xDEADBEEF, dtype)
        N = n * width
        self.w_ep = np.full(N, -1, np.int64)
        self.w_sg = np.full(N, -1, np.int64)
        self.w_sub = np.full(N, -1, np.int64)
        self.w_lane = np.full(N, -9, np.int64)
        self.r_ep = np.full(N, -1, np.int64)
        self.r_mask = np.zeros(N, np.int64)
        self.r_sub = np.full((NSG, N), -1, np.int64)
        self.r_lane = np.full((NSG, N), -9, np.int64)

    def _idx(self, idx):
        idx = np.asarray(idx, np.int64).reshape(-1)
        if idx.min() < 0 or idx.max() >= self.d.size:
            raise Race(f"{self.name}: out of bounds {idx.min()}..{idx.max()} of {self.d.size}")
        return idx

    def read(self, idx, sg, lane):
        """Components idx (flat) read by (sg, lane); lane -1: a cooperative op."""
        c = self.ctx
        idx = self._idx(idx)
        if np.any(self.w_ep[idx] < 0):
            raise Race(f"{self.name}: read of unwritten {idx[self.w_ep[idx] < 0][:4]} by sg {sg}")
        same = self.w_ep[idx] == c.ep
        if np.any(same & (self.w_sg[idx] != sg)):
            raise Race(f"{self.name}: sg {sg} reads what another subgroup wrote in this interval")
        if np.any((self.w_sub[idx] == c.sub[sg]) & (self.w_sg[idx] == sg) & (self.w_lane[idx] != lane)):
            raise Race(f"{self.name}: sg {sg} lane {lane} reads another lane's write without subgroupBarrier")
        fresh = self.r_ep[idx] != c.ep
        self.r_mask[idx[fresh]] = 0
        self.r_ep[idx] = c.ep
        self.r_mask[idx] |= 1 << sg
        rs = self.r_sub[sg]
        rl = self.r_lane[sg]
        cur = rs[idx] == c.sub[sg]
        rl[idx[cur & (rl[idx] != lane)]] = -2  # several readers
        rl[idx[~cur]] = lane
        rs[idx] = c.sub[sg]
        return self.d[idx].copy()

    def write(self, idx, vals, sg, lane):
        c = self.ctx
        idx = self._idx(idx)
        if len(np.unique(idx)) != len(idx):
            raise Race(f"{self.name}: one op writes a component twice")
        same = self.w_ep[idx] == c.ep
        if np.any(same & (self.w_sg[idx] != sg)):
            raise Race(f"{self.name}: write/write by two subgroups in one interval")
        if np.any((self.w_sub[idx] == c.sub[sg]) & (self.w_sg[idx] == sg) & (self.w_lane[idx] != lane)):
            raise Race(f"{self.name}: write/write by two lanes of sg {sg} without subgroupBarrier")
        rd = self.r_ep[idx] == c.ep
        if np.any(rd & ((self.r_mask[idx] & ~(1 << sg)) != 0)):
            raise Race(f"{self.name}: sg {sg} writes what another subgroup read in this interval")
        rs, rl = self.r_sub[sg], self.r_lane[sg]
        if np.any((rs[idx] == c.sub[sg]) & (rl[idx] != lane)):
            raise Race(f"{self.name}: sg {sg} lane {lane} writes what another lane read without subgroupBarrier")
        self.d[idx] = vals
        self.w_ep[idx] = c.ep
        self.w_sg[idx] = sg
        self.w_sub[idx] = c.sub[sg]
        self.w_lane[idx] = lane


def unpack2x16(u):  # uint32 -> 2 f16 (low half first)
    return np.array([u], dtype=np.uint32).view(np.float16)


def cm_index(element, stride, layout, width):
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    if layout == "row":
        return (element + i * stride) * width + j  # M[i][j]
    return (element + j * stride) * width + i


def cm_load(sh, element, stride, layout, sg):
    idx = cm_index(element, stride, layout, sh.width)
    return sh.read(idx, sg, -1).reshape(16, 16)


def cm_store_row(M, sh, element, stride, sg):
    idx = cm_index(element, stride, "row", sh.width)
    sh.write(idx, M.astype(sh.d.dtype).reshape(-1), sg, -1)


def cm_muladd(A, B, C):
    return (A.astype(f32) @ B.astype(f32) + C).astype(f32)


def shfl_xor(x, k):  # over the workgroup's 128 invocations, subgroups of 32
    tid = np.arange(WG)
    return x[(tid & ~31) | ((tid & 31) ^ k)]


class Shader:
    def __init__(self, HD, G, clock=False):
        self.HD, self.G = HD, G
        self.LDT = (HD + 8) // 4
        self.DC = HD // 16
        self.LDS = (KB + 4) // 4
        self.LDP = (KB + 8) // 4
        self.QPK = HD // 8
        assert KB * self.QPK % LANES == 0
        self.NQ = KB * self.QPK // LANES
        self.CPS = self.DC // NSG if self.DC >= NSG else 1
        self.perm = RNG.permutation(256)  # accumulator element of lane L's i-th: perm[8L + i]

    def shared_bytes(self, prep, clock):
        """The shader's declarations, in bytes (BLOCKS form)."""
        HD, G, LDT, LDS, LDP = self.HD, self.G, self.LDT, self.LDS, self.LDP
        b = 2 * 16 * LDT * 8 + NT * KB * LDT * 8 + NT * 16 * LDS * 16 + 2 * NT * 16 * LDP * 8
        b += NT * 16 * 4 + G * HD * 4
        if prep:  # kf, nws, kn, vn, hsc[HSC_LEN = 12], rcs (vec2)
            b += HD * 4 + 2 * HD * 4 + (HD // 2) * 4 * 2 + 12 * 4 + (HD // 2) * 8
        if clock:  # clk_m[8] + clock.glsl's clk_done, clk_slot, clk_t0 (uvec2), clk_c0
            b += 8 * 4 + 5 * 4
        return b

    # ---- fetch / put (per invocation) ----
    def fetch(self, quads, kv_dim, begin, j0, n, kvh, lane):
        r = []
        for i in range(self.NQ):
            v = lane + LANES * i
            j = j0 + v // self.QPK
            if j < n:
                assert ((begin + j) * kv_dim + kvh * self.HD) % 8 == 0
                idx = ((begin + j) * kv_dim + kvh * self.HD) // 8 + v % self.QPK
                assert idx < len(quads)
                r.append(quads[idx].copy())
            else:
                r.append(np.zeros(4, np.uint32))
        return r

    def put(self, T, tb, r, j0, inew, is_v, tid, kn, vn):
        sg, lane = tid // 32, tid % 32
        idx, vals = [], []
        for i in range(self.NQ):
            v = tid + LANES * i
            key, piece = v // self.QPK, v % self.QPK
            x = r[i]
            if kn is not None and j0 + key == inew:
                e = 4 * piece
                src = vn if is_v else kn
                x = src.read([e, e + 1, e + 2, e + 3], sg, lane).astype(np.uint32)
            at = tb + key * self.LDT + 2 * piece
            idx.append(np.arange(8) + at * 4)  # T[at], T[at + 1]
            vals.append(np.concatenate([unpack2x16(x[0]), unpack2x16(x[1]), unpack2x16(x[2]), unpack2x16(x[3])]))
        T.write(np.concatenate(idx), np.concatenate(vals), sg, lane)

    # ---- one workgroup ----
    def workgroup(self, pc, w, t, sp, nsplit, prep=None):
        HD, G, LDT, DC, LDS, LDP, CPS = self.HD, self.G, self.LDT, self.DC, self.LDS, self.LDP, self.CPS
        ctx = Ctx()
        Qh = Sh(ctx, "Qh", 16 * LDT, 4, f16)
        Ql = Sh(ctx, "Ql", 16 * LDT, 4, f16)
        T = Sh(ctx, "T", NT * KB * LDT, 4, f16)
        Ss = Sh(ctx, "Ss", NT * 16 * LDS, 4, f32)
        Ph = Sh(ctx, "Ph", NT * 16 * LDP, 4, f16)
        Pl = Sh(ctx, "Pl", NT * 16 * LDP, 4, f16)
        Al = Sh(ctx, "Al", NT * 16, 1, f32)
        qs = Sh(ctx, "qs", G * HD, 1, f32)
        kn = vn = None
        order = lambda: RNG.permutation(NSG)
        tids = lambda sg: range(32 * sg, 32 * sg + 32)
        pwrites = pc.setdefault("pwrites", np.zeros(len(pc["part"]), np.int64))

        h0 = w * G
        kvh = h0 // pc["group"]
        p = pc["pos"][t]
        begin, n = slice_of(pc, t, sp)
        end = begin + n
        kv_dim = pc["n_head_kv"] * HD
        k4, v4 = pc["kc"], pc["vc"]

        def store_part(idx, val):
            pc["part"][idx] = val
            pwrites[idx] += 1

        # the first block (the workgroup's)
        j_first = 0
        kr = [self.fetch(k4, kv_dim, begin, j_first, n, kvh, tid) for tid in range(WG)]
        vr = [self.fetch(v4, kv_dim, begin, j_first, n, kvh, tid) for tid in range(WG)]

        qbase = (t * pc["n_head"] + h0) * HD
        if prep is not None:
            # prep(): the queries (given here, made in qs), the new key and value in kn, vn
            kn = Sh(ctx, "kn", HD // 2, 1, np.uint32)
            vn = Sh(ctx, "vn", HD // 2, 1, np.uint32)
            has_new = begin <= p < end
            for sg in order():
                for tid in tids(sg):
                    for i in range(tid, G * HD, WG):
                        qs.write([i], pc["q"][qbase + i], sg, tid % 32)
                    if has_new:
                        for i in range(tid, HD // 2, WG):
                            kn.write([i], prep[0][i], sg, tid % 32)
                            vn.write([i], prep[1][i], sg, tid % 32)
            ctx.barrier()
            inew = p - begin if has_new else 0xFFFFFFFF
        else:
            inew = 0xFFFFFFFF
            for sg in order():
                for tid in tids(sg):
                    for i in range(tid, G * HD, WG):
                        qs.write([i], pc["q"][qbase + i], sg, tid % 32)
            ctx.barrier()

        # the queries as 16 rows of hi + lo; the row-number tile in each subgroup's columns
        for sg in order():
            for tid in tids(sg):
                lane = tid % 32
                for i in range(tid, 16 * HD // 4, WG):
                    r, d = i // (HD // 4), 4 * (i % (HD // 4))
                    v = np.zeros(4, f32)
                    if r < G:
                        v = qs.read([r * HD + d, r * HD + d + 1, r * HD + d + 2, r * HD + d + 3], sg, lane)
                    hi = v.astype(f16)
                    Qh.write(np.arange(4) + (r * LDT + d // 4) * 4, hi, sg, lane)
                    Ql.write(np.arange(4) + (r * LDT + d // 4) * 4, (v - hi.astype(f32)).astype(f16), sg, lane)
            sbase = 4 * sg
            for lane in range(32):
                for i in range(lane, 64, 32):
                    Ss.write(np.arange(4) + (sbase + (i // 4) * LDS + i % 4) * 4, np.full(4, f32(i // 4)), sg, lane)
        ctx.barrier()
        rows = [None] * NSG
        for sg in order():
            sbase = 4 * sg
            rows[sg] = cm_load(Ss, sbase, LDS, "row", sg).reshape(-1)[self.perm].reshape(32, 8)
        ctx.barrier()

        tid = np.arange(WG)
        srow, spart = tid // 8, tid % 8
        m = np.full(WG, NEG_BIG, f32)
        l = np.zeros(WG, f32)
        acc = [[np.zeros((16, 16), f32) for _ in range(CPS)] for _ in range(NSG)]
        j0 = 0
        while j0 < n:
            jn = j0 + KB
            # keys into the tile
            for sg in order():
                for t_ in tids(sg):
                    self.put(T, 0, kr[t_], j0, inew, False, t_, kn, vn)
            ctx.barrier()
            # scores
            if jn < n:
                kr = [self.fetch(k4, kv_dim, begin, jn, n, kvh, t_) for t_ in range(WG)]
            for sg in order():
                s = np.zeros((16, 16), f32)
                for c in range(DC):
                    kt = cm_load(T, (16 * sg) * LDT + 4 * c, LDT, "col", sg)
                    qa = cm_load(Qh, 4 * c, LDT, "row", sg)
                    s = cm_muladd(qa, kt, s)
                    qa = cm_load(Ql, 4 * c, LDT, "row", sg)
                    s = cm_muladd(qa, kt, s)
                cm_store_row(s, Ss, 4 * sg, LDS, sg)
            ctx.barrier()
            # values into the tile; the softmax
            for sg in order():
                for t_ in tids(sg):
                    self.put(T, 0, vr[t_], j0, inew, True, t_, kn, vn)
            if jn < n:
                vr = [self.fetch(v4, kv_dim, begin, jn, n, kvh, t_) for t_ in range(WG)]
            bm = np.full(WG, NEG_BIG, f32)
            sv = np.zeros((WG, 2, 4), f32)
            for t_ in range(WG):
                sg, lane = t_ // 32, t_ % 32
                for q in range(2):
                    x = (Ss.read(np.arange(4) + (srow[t_] * LDS + 2 * spart[t_] + q) * 4, sg, lane)
                         * f32(pc["scale"])).astype(f32)
                    for e in range(4):
                        in_ = srow[t_] < G and j0 + 8 * spart[t_] + 4 * q + e < n
                        x[e] = x[e] if in_ else NEG_BIG
                        bm[t_] = max(bm[t_], x[e])
                    sv[t_, q] = x
            bm = np.maximum(bm, shfl_xor(bm, 1))
            bm = np.maximum(bm, shfl_xor(bm, 2))
            bm = np.maximum(bm, shfl_xor(bm, 4))
            mn = np.maximum(m, bm)
            with np.errstate(over="ignore"):
                alpha = np.exp((m - mn).astype(f32)).astype(f32)
            m = mn
            bs = np.zeros(WG, f32)
            for t_ in range(WG):
                sg, lane = t_ // 32, t_ % 32
                for q in range(2):
                    wq = np.zeros(4, f32)
                    for e in range(4):
                        x = sv[t_, q, e]
                        wq[e] = np.exp(min(f32(x - mn[t_]), f32(0.0))) if x > NEG_BIG else f32(0.0)
                    bs[t_] = f32(bs[t_] + f32(f32(f32(wq[0] + wq[1]) + wq[2]) + wq[3]))
                    wh = wq.astype(f16)
                    Ph.write(np.arange(4) + (srow[t_] * LDP + 2 * spart[t_] + q) * 4, wh, sg, lane)
                    Pl.write(np.arange(4) + (srow[t_] * LDP + 2 * spart[t_] + q) * 4,
                             (wq - wh.astype(f32)).astype(f16), sg, lane)
            bs = (bs + shfl_xor(bs, 1)).astype(f32)
            bs = (bs + shfl_xor(bs, 2)).astype(f32)
            bs = (bs + shfl_xor(bs, 4)).astype(f32)
            l = (l * alpha + bs).astype(f32)
            for t_ in range(WG):
                if spart[t_] == 0:
                    Al.write([srow[t_]], alpha[t_], t_ // 32, t_ % 32)
            ctx.barrier()
            # rescale, P.V
            for sg in order():
                for c in range(CPS):
                    af = acc[sg][c].reshape(-1)
                    for lane in range(32):
                        a = Al.read(rows[sg][lane].astype(np.int64), sg, lane)  # Al[uint(rows[i])], i < 8
                        for i in range(8):
                            af[self.perm[lane * 8 + i]] *= a[i]
                for kc in range(KB // 16):
                    ph = cm_load(Ph, 4 * kc, LDP, "row", sg)
                    pl = cm_load(Pl, 4 * kc, LDP, "row", sg)
                    for c in range(CPS):
                        if sg * CPS + c >= DC:
                            continue
                        vt = cm_load(T, (16 * kc) * LDT + 4 * (sg * CPS + c), LDT, "row", sg)
                        acc[sg][c] = cm_muladd(ph, vt, acc[sg][c])
                        acc[sg][c] = cm_muladd(pl, vt, acc[sg][c])
            ctx.barrier()
            j0 += KB
        # m and l
        for t_ in range(WG):
            if spart[t_] == 0 and srow[t_] < G:
                ob = ((t * pc["n_head"] + h0 + srow[t_]) * nsplit + sp) * (HD + 2)
                store_part(ob, m[t_] if n > 0 else NEG_BIG)
                store_part(ob + 1, l[t_] if n > 0 else f32(0.0))
        # the output chunks through each subgroup's 16 columns of Ss
        for sg in order():
            for c in range(CPS):
                cm_store_row(acc[sg][c], Ss, 4 * sg, LDS, sg)
                ctx.subgroup_barrier(sg)
                for lane in range(32):
                    idx = lane
                    while idx < G * 16 and sg * CPS + c < DC:
                        r, col = idx // 16, idx % 16
                        ob = ((t * pc["n_head"] + h0 + r) * nsplit + sp) * (HD + 2)
                        val = Ss.read([(r * LDS + 4 * sg + col // 4) * 4 + col % 4], sg, lane)[0]
                        store_part(ob + 2 + 16 * (sg * CPS + c) + col, val)
                        idx += 32
                ctx.subgroup_barrier(sg)
        return begin, n, inew


def run_case(HD, G, n_head_kv, p, split_len, window=0, prep=False, seed=0):
    pc, Kref, Vref, q, scale, lo, nsplit = make_case(HD, G, n_head_kv, p, split_len, window,
                                                     prep, seed, past=80)
    sh = Shader(HD, G)
    worst = 0.0
    lens = []
    for w in range(pc["n_head"] // G):
        for sp in range(nsplit):
            pr = new_kv(Kref, Vref, p, w, HD) if prep else None
            try:
                begin, n, inew = sh.workgroup(pc, w, 0, sp, nsplit, pr)
            except Race as e:
                return False, np.inf, f"RACE {e}", lens
            if w == 0:
                lens.append(n)
            msg, wst = check_slice(pc, Kref, Vref, q, scale, HD, G, w, sp, nsplit, begin, n)
            worst = max(worst, wst)
            if msg:
                return False, worst, msg, lens
    if not np.all(pc["pwrites"] == 1):
        return False, worst, f"partials written {set(pc['pwrites'].tolist())} times", lens
    msg, wst = check_merged(pc, Kref, Vref, q, scale, HD, G, nsplit, lo, p)
    return msg is None, max(worst, wst), msg or "", lens


def empty_slice(HD, G, prep):
    """n = 0 (a slice past the keys): m = -3e38, l = 0, zeros; nothing read."""
    rng = np.random.default_rng(0)
    K = rng.standard_normal((64, HD)).astype(f16)
    pc = dict(kc=to_words(K).reshape(-1, 4), vc=to_words(K).reshape(-1, 4), q=np.ones(G * HD, f32),
              pos=[20], n_head=G, n_head_kv=1, scale=0.1, window=0, split_len=64, group=G,
              part=np.full(G * 2 * (HD + 2), np.nan, f32))
    pr = (to_words(K[20].copy()), to_words(K[20].copy())) if prep else None
    begin, n, inew = Shader(HD, G).workgroup(pc, 0, 0, 1, 2, pr)
    part = pc["part"].reshape(G, 2, HD + 2)[:, 1]
    ok = n == 0 and np.all(part[:, 0] == NEG_BIG) and np.all(part[:, 1] == 0) and np.all(part[:, 2:] == 0)
    return ok and np.all(pc["pwrites"].reshape(G, 2, HD + 2)[:, 1] == 1)


def rust_shared_bytes(hd, g, blocks, prep, clock):  # attention.rs's attn_dec_cm_shared_bytes
    prep = 4 * (5 * hd + 12) if prep else 0
    clock = 4 * 13 if clock else 0
    if blocks:
        tiles = 64 * (hd + 8) * 2 + 16 * 68 * 4 + 2 * 16 * 72 * 2 + 16 * 4
    else:
        tiles = 4 * 16 * (hd + 8) * 2 + 4 * 16 * 20 * 4 + 2 * 4 * 16 * 24 * 2 + 3 * 4 * 16 * 4
    return 2 * 16 * (hd + 8) * 2 + tiles + 4 * g * hd + prep + clock


def cases():
    out = []
    # one slice of n keys (split_len 1024): n = p + 1; NaN in the cache past p
    for n in (1, 7, 16, 63, 64, 65, 100, 128, 200, 300):
        out.append((n - 1, 1024, 0))
    # the host's slices (multiples of 64), the last one partial; with a window
    out += [(299, 64, 0), (299, 128, 0), (299, 192, 0), (255, 128, 0), (299, 64, 150), (200, 128, 70)]
    return out


if __name__ == "__main__":
    quick = len(sys.argv) > 1 and sys.argv[1] == "quick"
    allc = []
    for HD in (32, 64, 128):
        for G in (1, 2, 4, 8):
            for (p, sl, win) in cases():
                for prep in (False, True):
                    allc.append((HD, G, p, sl, win, prep))
    if quick:
        allc = allc[::11]
    ok_all, worst_all = True, 0.0
    for i, (HD, G, p, sl, win, prep) in enumerate(allc):
        n_head_kv = 2 if G <= 4 else 1
        ok, worst, msg, lens = run_case(HD, G, n_head_kv, p, sl, win, prep, seed=i)
        worst_all = max(worst_all, worst)
        ok_all &= ok
        print(f"HD={HD:3d} G={G} p={p:3d} split={sl:4d} win={win:3d} prep={int(prep)} n={lens}: "
              f"{'ok' if ok else 'FAIL ' + msg} worst {worst:.2e}", flush=True)
        if not ok and len(sys.argv) > 2:
            print("FIRST FAIL:", f"HD={HD} G={G} p={p} split={sl} prep={int(prep)}:", msg)
            sys.exit(1)
    if not quick:
        for HD in (32, 64, 128):
            for G in (1, 8):
                for prep in (False, True):
                    try:
                        e = empty_slice(HD, G, prep)
                    except Race as r:
                        e = f"RACE {r}"
                    ok_all &= e is True or e == np.True_
                    print(f"empty slice HD={HD} G={G} prep={int(prep)}: {'ok' if e is True or e == np.True_ else 'FAIL ' + str(e)}")
        for HD in (32, 64, 128):
            for G in (1, 2, 4, 8):
                for prep in (False, True):
                    for clock in (False, True):
                        a = Shader(HD, G).shared_bytes(prep, clock)
                        b = rust_shared_bytes(HD, G, True, prep, clock)
                        if a != b:
                            ok_all = False
                            print(f"shared bytes HD={HD} G={G} prep={prep} clock={clock}: shader {a} host {b}")
        print("shared bytes (BLOCKS): host formula checked against the declarations;",
              "max", rust_shared_bytes(128, 8, True, True, True), "bytes (HD 128, G 8, prep, clock)")
    print("ALL PASS" if ok_all else "SOME FAIL", f"worst {worst_all:.2e}")
