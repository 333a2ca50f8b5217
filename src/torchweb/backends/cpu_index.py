"""The cpu device's index primitives on numpy: gather and scatter through index tensors (the
same contract as backends/webgpu/kernels/index.py) and mask compaction. Indices are checked
here, before anything is written, with the op's own exception type and PyTorch's words."""

from .cpu_arrays import array_for_read, array_for_write, np, view

MAX_INDEX_BUFFERS = 1 << 30   # numpy binds nothing
ATOMIC_FLOAT16 = True         # float16 reduces in place (numpy's ufunc.at)

_REDUCE = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _positions(target, shape, walk, indices, check):
    """Flat positions in target's storage array for every position of the iteration space."""
    n = np()
    pos = n.full(shape, target._offset, dtype=n.int64)
    for j, w in enumerate(walk):
        if w is not None and shape[j] > 1:
            along = [1] * len(shape)
            along[j] = shape[j]
            pos = pos + n.arange(shape[j], dtype=n.int64).reshape(along) * target._stride[w]
    for idx, dim, wrap in indices:
        v = view(idx).astype(n.int64)
        size = target.shape[dim]
        if wrap:
            v = n.where(v < 0, v + size, v)
        bad = (v < 0) | (v >= size)
        if bad.any():
            first = int(view(idx)[tuple(a[0] for a in n.nonzero(bad))])
            raise check[1](check[2].format(index=first, dim=dim, size=size, numel=size))
        pos = pos + v * target._stride[dim]
    return pos


def index_gather(out, src, walk, indices, check):
    if out.numel() == 0:
        return
    pos = _positions(src, tuple(out.shape), walk, indices, check)
    np().copyto(view(out), array_for_read(src._storage)[pos])


def index_scatter(dst, src, walk, indices, reduce, check):
    n = np()
    shape = tuple(src.shape) if hasattr(src, "_storage") else tuple(indices[0][0].shape)
    pos = _positions(dst, shape, walk, indices, check).reshape(-1)
    if pos.size == 0:
        return
    arr = array_for_write(dst._storage)
    if hasattr(src, "_storage"):
        vals = view(src).astype(arr.dtype).reshape(-1)
    else:
        with n.errstate(all="ignore"):
            vals = n.full(pos.shape, src).astype(arr.dtype)
    with n.errstate(all="ignore"):   # inf * 0, float16 overflow: as PyTorch, silently
        if reduce is None:
            arr[pos] = vals     # duplicates: the last one wins, as PyTorch's CPU loop
        else:
            getattr(n, _REDUCE[reduce]).at(arr, pos, vals)


def mask_compact(out, mask, pos, src):
    """mask's nonzeros in row-major order: coordinates into out (ndim, count), or src's values
    into out (count,). pos (the running count) is the GPU's; numpy needs none."""
    m = view(mask)
    where = np().nonzero((m.reshape(1) if m.ndim == 0 else m) != 0)
    if src is None:
        for d, c in enumerate(where):
            view(out)[d] = c
    else:
        s = view(src)
        view(out)[...] = (s.reshape(1) if s.ndim == 0 else s)[where]


def masked_scatter(out, mask, pos, source, check):
    m = view(mask) != 0
    k = int(m.sum())
    if k > source.numel():
        raise check[1](check[2])
    view(out)[m] = view(source).reshape(-1)[:k]
