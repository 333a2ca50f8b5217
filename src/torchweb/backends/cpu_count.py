"""The cpu device's search and counting primitives on numpy (the webgpu side:
backends/webgpu/count.py): PyTorch's binary search loop (NaN and unsorted data included), the
compaction scatter behind unique, and bincount (sequential float32 sums, as PyTorch's loop)."""

from .cpu_arrays import np, view


def search_sorted(spec, out, seq, values, sorter=None):
    n = np()
    right, acc_cls, shared = spec.right, spec.acc_cls, spec.shared
    s, v = view(seq), view(values)
    if acc_cls == "f":
        s, v = s.astype(n.float32), v.astype(n.float32)
    else:
        s, v = s.astype(n.int64), v.astype(n.int64)
    rows, K = v.shape
    S, M = s.shape
    if sorter is not None:
        o = view(sorter).astype(n.int64)
        if ((o < 0) | (o >= M)).any():
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        s = n.take_along_axis(s, o, axis=1)
    row = n.zeros((rows, K), dtype=n.int64) if shared else n.broadcast_to(n.arange(rows)[:, None], (rows, K))
    lo = n.zeros((rows, K), dtype=n.int64)
    hi = n.full((rows, K), M, dtype=n.int64)
    with n.errstate(invalid="ignore"):
        while True:
            act = lo < hi
            if not act.any():
                break
            mid = lo + (hi - lo) // 2
            a = s[row, n.minimum(mid, max(M - 1, 0))] if M else n.zeros_like(v)
            ok = (a > v) if right else (a >= v)   # False where either is NaN, as PyTorch's !(a >= v)
            lo = n.where(act & ~ok, mid + 1, lo)
            hi = n.where(act & ok, mid, hi)
    n.copyto(view(out), lo, casting="unsafe")


def count_scatter(out, index, src=None, mask=None, bias=0):
    n = np()
    idx = view(index).astype(n.int64) + bias
    vals = view(src) if src is not None else n.arange(idx.size)
    if mask is not None:
        m = view(mask) != 0
        idx, vals = idx[m], vals[m]
    view(out)[idx] = vals


def count_gather(out, index, src):
    view(out)[...] = view(src)[view(index).astype(np().int64)]


def bincount(out, inp, weights=None):
    n = np()
    o = view(out)
    i = view(inp).astype(n.int64)
    if weights is None:
        o += n.bincount(i, minlength=o.size)[:o.size].astype(o.dtype)
    else:
        n.add.at(o, i, view(weights).astype(o.dtype))
