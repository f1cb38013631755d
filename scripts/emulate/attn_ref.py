"""What the attn_dec_cm emulations share: a decode step's case (a KV cache with NaN past the
row's position, and at it where the q/k preparation supplies the new key and value), the
float64 reference of a slice's partials [m, l, acc] and of attn_combine's merge of them, and
the f16 → u32 packing the cache uses."""
import numpy as np

f16, f32 = np.float16, np.float32
NEG_BIG = f32(-3.0e38)


def to_words(x16):  # f16 array -> uint32 words (pairs)
    return x16.reshape(-1).view(np.uint32)


def make_case(HD, G, n_head_kv, p, split_len, window, prep, seed, past):
    """The push constants' dict (cache as (N, 4) words, partials NaN-filled) and the reference
    inputs: (pc, Kref, Vref, q, scale, lo, nsplit). `past` positions of NaN follow p."""
    rng = np.random.default_rng(seed)
    n_head = n_head_kv * G
    kv_dim = n_head_kv * HD
    npos = p + 1 + past
    K = rng.standard_normal((npos, kv_dim)).astype(f16)
    V = rng.standard_normal((npos, kv_dim)).astype(f16)
    K[p + 1:] = np.nan
    V[p + 1:] = np.nan
    q = (rng.standard_normal(n_head * HD) * 0.7).astype(f32)
    scale = 1.0 / np.sqrt(HD) * 2.5  # a sharp-ish softmax
    lo = p + 1 - window if (window > 0 and p + 1 > window) else 0
    nsplit = -(-(p + 1 - lo) // split_len)
    Kref, Vref = K.copy(), V.copy()
    if prep:
        Kref[p] = rng.standard_normal(kv_dim).astype(f16)
        Vref[p] = rng.standard_normal(kv_dim).astype(f16)
        K[p] = np.nan  # the cache's place not yet written: must come from kn/vn
        V[p] = np.nan
    pc = dict(kc=to_words(K).reshape(-1, 4), vc=to_words(V).reshape(-1, 4), q=q, pos=[p],
              n_head=n_head, n_head_kv=n_head_kv, scale=scale, window=window,
              split_len=split_len, group=G, part=np.full(n_head * nsplit * (HD + 2), np.nan, f32))
    return pc, Kref, Vref, q, scale, lo, nsplit


def new_kv(Kref, Vref, p, w, HD):
    """The prep's new key and value of KV head w, as kn/vn words."""
    return (to_words(Kref[p, w * HD:(w + 1) * HD].copy()),
            to_words(Vref[p, w * HD:(w + 1) * HD].copy()))


def check_slice(pc, Kref, Vref, q, scale, HD, G, w, sp, nsplit, begin, n):
    """(None or what is wrong, the worst relative error) for workgroup (w, sp)'s partials."""
    worst = 0.0
    for g in range(G):
        h = w * G + g
        ob = (h * nsplit + sp) * (HD + 2)
        got = pc["part"][ob:ob + HD + 2].astype(np.float64)
        if n == 0:
            if not (got[0] == NEG_BIG and got[1] == 0 and np.all(got[2:] == 0)):
                return f"empty slice g={g}: {got[:4]}", worst
            continue
        kk = Kref[begin:begin + n, w * HD:(w + 1) * HD].astype(np.float64)
        vv = Vref[begin:begin + n, w * HD:(w + 1) * HD].astype(np.float64)
        s = kk @ q[h * HD:(h + 1) * HD].astype(np.float64) * scale
        mref = s.max()
        e = np.exp(s - mref)
        lref = e.sum()
        aref = e @ vv
        if not np.all(np.isfinite(got)):
            return f"non-finite g={g}", np.inf
        err_m = abs(got[0] - mref) / max(1.0, abs(mref))
        err_l = abs(got[1] - lref) / lref
        err_a = np.max(np.abs(got[2:] - aref)) / max(np.max(np.abs(aref)), 1e-30)
        worst = max(worst, err_m, err_l, err_a)
        if not (err_m < 1e-5 and err_l < 1e-4 and err_a < 1e-4):
            return (f"sp={sp} n={n} g={g}: m {got[0]:.6g} vs {mref:.6g}, l {got[1]:.6g} vs "
                    f"{lref:.6g}, acc err {err_a:.2e}"), worst
    return None, worst


def check_merged(pc, Kref, Vref, q, scale, HD, G, nsplit, lo, p):
    """(None or what is wrong, the worst relative error) for attn_combine's merge of every
    head's slices against the whole attention."""
    n_head = pc["n_head"]
    part = pc["part"].reshape(n_head, nsplit, HD + 2).astype(np.float64)
    worst = 0.0
    for h in range(n_head):
        M = part[h, :, 0].max()
        wts = np.exp(part[h, :, 0] - M)
        L = (wts * part[h, :, 1]).sum()
        out = (wts[:, None] * part[h, :, 2:]).sum(0) / L
        kvh = h // G
        kk = Kref[lo:p + 1, kvh * HD:(kvh + 1) * HD].astype(np.float64)
        vv = Vref[lo:p + 1, kvh * HD:(kvh + 1) * HD].astype(np.float64)
        s = kk @ q[h * HD:(h + 1) * HD].astype(np.float64) * scale
        e = np.exp(s - s.max())
        ref = e @ vv / e.sum()
        err = np.max(np.abs(out - ref)) / max(np.max(np.abs(ref)), 1e-30)
        worst = max(worst, err)
        if err > 1e-4:
            return f"merged h={h}: {err:.2e}", worst
    return None, worst


def slice_of(pc, t, sp):
    """The shader's keys [begin, end) of slice sp for row t, as (begin, n)."""
    p = pc["pos"][t]
    win = pc["window"]
    lo = p + 1 - win if (win > 0 and p + 1 > win) else 0
    begin = lo + sp * pc["split_len"]
    end = min(p + 1, lo + (sp + 1) * pc["split_len"])
    return begin, end - begin if end > begin else 0
