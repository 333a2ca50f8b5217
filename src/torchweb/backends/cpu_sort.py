"""The cpu device's scans and sorts on numpy (the webgpu side: backends/webgpu/sort_scan.py).
Same semantics as PyTorch's CPU kernels: cummax/cummin let NaN and ties win at the latest
position, sorts are stable with NaN largest and -0.0 equal to 0.0."""

from .base import absent
from .cpu_arrays import np, view

SPLIT_SCANS = False     # numpy scans a row in one go
SORT_BLOCK = None       # and sorts it in one call (sort() below)


def _scan_array(n, kind, x, acc_cls, out_dtype):
    if kind == "sum":
        return n.cumsum(x, axis=-1, dtype=n.float32 if acc_cls == "f" else n.int64)
    if kind == "prod":
        return n.cumprod(x, axis=-1, dtype=n.float32 if acc_cls == "f" else n.int64)
    if kind == "logsumexp":
        return n.logaddexp.accumulate(x.astype(n.float32), axis=-1) if x.shape[-1] else x.astype(n.float32)
    raise ValueError(kind)


def _cumext(n, kind, x):
    """cummax/cummin along the last axis: (values, indices), NaN and ties winning at the latest."""
    vals = n.empty_like(x)
    idx = n.empty(x.shape, dtype=n.int64)
    if x.shape[-1] == 0:
        return vals, idx
    cur = x[..., 0].copy()
    ci = n.zeros(x.shape[:-1], dtype=n.int64)
    isf = x.dtype.kind == "f"
    for k in range(x.shape[-1]):
        v = x[..., k]
        if isf:
            win = n.isnan(v) | (~n.isnan(cur) & ((v >= cur) if kind == "max" else (v <= cur)))
        else:
            win = (v >= cur) if kind == "max" else (v <= cur)
        cur = n.where(win, v, cur)
        ci = n.where(win, k, ci)
        vals[..., k] = cur
        idx[..., k] = ci
    return vals, idx


def scan(p, out, inp, indices=None, carry=None, carry_indices=None, index_in=None):
    """(p's split options, carry and index_in are a split scan's passes: never asked,
    SPLIT_SCANS is False.)"""
    n = np()
    kind, acc_cls, reverse = p.kind, p.acc_cls, p.reverse
    x = view(inp)
    if reverse:
        x = x[..., ::-1]
    if x.dtype == n.float16:
        x = x.astype(n.float32)
    with n.errstate(all="ignore"):
        if kind in ("max", "min"):
            r, ri = _cumext(n, kind, x)
            n.copyto(view(indices), ri, casting="unsafe")
        else:
            r = _scan_array(n, kind, x, acc_cls, out.dtype)
    if reverse:
        r = r[..., ::-1]
    with n.errstate(all="ignore"):
        n.copyto(view(out), r, casting="unsafe")


def _sort_order(x, descending):
    """The stable sorting permutation of x's last axis (NaN largest, -0.0 == 0.0)."""
    n = np()
    pos = n.broadcast_to(n.arange(x.shape[-1]), x.shape)
    if x.dtype.kind == "f":
        x = x.astype(n.float64)
        nan = n.isnan(x)
        clean = n.where(nan, 0.0, x) + 0.0   # -0.0 + 0.0 is 0.0: equal keys
        if descending:
            return n.lexsort((pos, -clean, ~nan), axis=-1)
        return n.lexsort((pos, clean, nan), axis=-1)
    if x.dtype == n.bool_:
        x = x.astype(n.int64)
    return n.lexsort((pos, ~x if descending else x), axis=-1)


def sort(values, indices, inp, descending):
    n = np()
    x = view(inp)
    order = _sort_order(x, descending) if x.shape[-1] else n.zeros(x.shape, dtype=n.int64)
    n.copyto(view(values), n.take_along_axis(x, order, axis=-1), casting="unsafe")
    n.copyto(view(indices), order, casting="unsafe")


def sort_block(plan, inp, size, values=None, indices=None, work_keys=None, work_idx=None):
    raise absent("sort_block", "SORT_BLOCK is None: sort() sorts whole rows")


def sort_step(plan, work_keys, work_idx, k, j):
    raise absent("sort_step", "SORT_BLOCK is None: sort() sorts whole rows")


def sort_merge(plan, work_keys, work_idx, values=None, indices=None):
    raise absent("sort_merge", "SORT_BLOCK is None: sort() sorts whole rows")


def sort_scatter_add(out, idx, src):
    n = np()
    o, i, s = view(out), view(idx), view(src)
    rows = n.broadcast_to(n.arange(o.shape[0])[:, None], i.shape)
    n.add.at(o, (rows, i), s.astype(o.dtype))
