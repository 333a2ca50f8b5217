"""Tensors past maxStorageBufferBindingSize (128 MiB by default in browsers; a GPT-2 embedding
table is 154 MB). Their buffers are made whole, up to maxBufferSize: uploads, readbacks and
buffer copies take them whole, and a kernel binds a *window* of one, bytes [offset, offset +
size) with offset a multiple of 256 (minStorageBufferOffsetAlignment).

A dispatch that would bind a buffer past the limit is refused before it is recorded
(limits.BindingTooLarge). The primitives of backend.py then run the work again here: first
with every operand seen through the window its view spans (a view of a few rows of a big
table), then, for elementwise ops, reductions, the embedding gather and layer_norm, in blocks of
the output whose operands each fit in a window, and for the index gathers and scatters, over
windows of the indexed tensor (each dispatch doing the positions that fall in its window). ops/lowering.py splits matmul the same way. What is not
split keeps the refusal, which names the kernel, the size and the limit."""

from math import prod

from ..limits import BindingTooLarge
from .storage import GPUStorage

ALIGN = 256   # minStorageBufferOffsetAlignment: a window's offset is a multiple of it


class _Unsplittable(BindingTooLarge):
    """No block of the kind a split needs fits (split() raises the kernel's refusal instead)."""


def itemsize(dtype):
    return 2 if dtype.gpu_storage == "f16" else 4


class WindowStorage:
    """Bytes [offset, offset + size) of a storage's buffer, bound in its place (the runtime
    turns the window's id into the buffer's id and offset at the flush)."""

    __slots__ = ("rt", "parent", "offset", "size", "numel", "dtype", "pending", "readers", "touched",
                 "version")
    device_type = "webgpu"

    def __init__(self, parent, offset, size):
        self.rt, self.parent, self.offset, self.size = parent.rt, parent, offset, size
        self.dtype = parent.dtype
        self.numel = size // itemsize(parent.dtype)
        self.pending = self.readers = None
        self.touched = True
        self.version = parent.version

    def buffer_for_read(self):
        return self.rt.window(self.parent.buffer_for_read(), self.offset)

    def buffer_for_write(self):
        return self.rt.window(self.parent.buffer_for_write(), self.offset)


class View:
    """The layout of a tensor (shape, strides, offset) over a storage or a window of one: what
    the kernels read of a Tensor, for the pieces of a split op (backends make no Tensors)."""

    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype", "device")

    def __init__(self, storage, shape, stride, offset, dtype, device):
        self._storage, self._shape, self._stride, self._offset = storage, tuple(shape), tuple(stride), offset
        self.dtype, self.device = dtype, device

    @property
    def shape(self):
        return self._shape

    def numel(self):
        return prod(self._shape)

    def dim(self):
        return len(self._shape)

    def is_contiguous(self):
        expect = 1
        for s, st in zip(reversed(self._shape), reversed(self._stride)):
            if s != 1 and st != expect:
                return False
            expect *= s
        return True

    def _view(self, shape, stride, offset):
        return View(self._storage, shape, stride, offset, self.dtype, self.device)


def span(t):
    """(first, last + 1) elements of t's storage that t reads."""
    lo = hi = t._offset
    for s, st in zip(t._shape, t._stride):
        if s == 0:
            return t._offset, t._offset
        if st >= 0:
            hi += (s - 1) * st
        else:
            lo += (s - 1) * st
    return lo, hi + 1


def window_bytes(t):
    """The bytes of t's storage that a window binding t spans (its start aligned down)."""
    lo, hi = span(t)
    n = itemsize(t.dtype)
    return ((hi * n + 3) & ~3) - (lo * n) // ALIGN * ALIGN


def windowed(t, limit, cache):
    """t itself where its storage's buffer fits in a binding, else t seen through a window of
    it (cache: the windows made so far for one dispatch's operands, so that two operands of
    one view share one binding); BindingTooLarge where even its window is too large."""
    s = t._storage
    if s.size <= limit:
        return t
    lo, hi = span(t)
    n = itemsize(t.dtype)
    start = (lo * n) // ALIGN * ALIGN
    size = ((hi * n + 3) & ~3) - start
    if size > limit:
        raise _Unsplittable(
            f"torchweb: a view of {size} bytes of a tensor of {s.size} bytes is larger than this "
            f"WebGPU adapter's maxStorageBufferBindingSize ({limit} bytes), and this op is not "
            f"split for tensors past that limit", size, limit)
    key = (id(s), start, size)
    w = cache.get(key)
    if w is None:
        w = cache[key] = WindowStorage(s, start, size)
    return View(w, t._shape, t._stride, t._offset - start // n, t.dtype, t.device)


def retry(run, limit, tensors, *args):
    """run(*tensors, *args) again with each tensor seen through its window: True if that
    fits, False where some tensor's view spans too much to fit in one binding."""
    cache = {}
    try:
        views = [windowed(t, limit, cache) if t is not None and hasattr(t, "_storage") else t
                 for t in tensors]
    except BindingTooLarge:
        return False
    run(*views, *args)
    return True


def part(t, block):
    """The block of t [(start, stop) per dim] as a View of t's storage."""
    offset = t._offset + sum(a * st for (a, _), st in zip(block, t._stride))
    return View(t._storage, [b - a for a, b in block], t._stride, offset, t.dtype, t.device)


def split(error, how, *args):
    """how(*args), one of the splits below, for a kernel refused with error (BindingTooLarge):
    that refusal again, naming the kernel, size and limit, where no piece of the split fits."""
    try:
        how(*args)
    except _Unsplittable:
        raise error from None


def blocks(shape, fits, d=0, prefix=()):
    """Blocks [(start, stop) per dim] covering shape, each one for which fits(block) holds:
    runs of dim d's indices as long as fit (all equal but the last), a dim further in where a
    single index does not fit."""
    if d == len(shape):
        if not fits(prefix):
            raise _Unsplittable("torchweb: no piece of this op fits in one binding")
        yield prefix
        return
    n = shape[d]
    rest = tuple((0, s) for s in shape[d + 1:])
    k = n
    while k > 1 and not fits(prefix + ((0, k),) + rest):
        k = (k + 1) // 2
    if not fits(prefix + ((0, k),) + rest):   # (k == 1: one index spans too much)
        for i in range(n):
            yield from blocks(shape, fits, d + 1, prefix + ((i, i + 1),))
        return
    for i in range(0, n, k):
        yield prefix + ((i, min(n, i + k)),) + rest


def fits_in(limit, tensors):
    """fits(block) for blocks(): each tensor's block spans a window under the limit (less one
    alignment: a later block's window may start up to 255 bytes before its first element)."""
    big = [t for t in tensors if t._storage.size > limit]

    def fits(block):
        return all(window_bytes(part(t, block)) + ALIGN <= limit for t in big)
    return fits


def split_elementwise(run, limit, out, operands, *args):
    """run(out, operands, *args) by blocks of out whose operands (broadcast to out's shape:
    the elementwise primitive's contract) each fit in a window."""
    tensors = [out] + [o for o in operands if hasattr(o, "_storage")]
    for block in blocks(tuple(out._shape), fits_in(limit, tensors)):
        cache = {}
        o = windowed(part(out, block), limit, cache)
        ops = [windowed(part(x, block), limit, cache) if hasattr(x, "_storage") else x for x in operands]
        run(o, ops, *args)


def split_reduce(run, limit, p, out, inp):
    """run(p, out, inp) (a reduction pass, kernels/reduction.py) in pieces that fit: blocks of
    outputs whose rows each fit; for a split reduction's first pass (p.nchunks partials an
    output), each output's chunks in groups, as a (chunks, chunk) reduction of one window."""
    nred = p.nred
    kept, red = tuple(inp._shape[:len(inp._shape) - nred]), tuple(inp._shape[len(inp._shape) - nred:])
    pair = 2 if p.pairs_out else 1
    if p.nchunks == 1:
        shape = kept + ((pair,) if pair == 2 else ())
        strides, step = [], 1
        for s in reversed(shape):
            strides.insert(0, step)
            step *= s
        o = View(out._storage, shape, strides, out._offset, out.dtype, out.device)
        full, ofull = tuple((0, s) for s in red), (((0, 2),) if pair == 2 else ())

        def fits(block):
            return (window_bytes(part(inp, block + full)) + ALIGN <= limit
                    and window_bytes(part(o, block + ofull)) + ALIGN <= limit)
        try:
            pieces = list(blocks(kept, fits))
        except BindingTooLarge:   # one output's elements span too much (a sum over dim 0)
            _reduce_by_slabs(run, limit, p, out, inp, kept, red)
            return
        for block in pieces:
            cache = {}
            run(p, windowed(part(o, block + ofull), limit, cache), windowed(part(inp, block + full), limit, cache))
        return
    if p.kind in ("argmax", "argmin"):
        raise BindingTooLarge(f"torchweb: {p.kind} of a tensor past the binding limit ({limit} "
                              f"bytes, maxStorageBufferBindingSize) is not split", 0, limit)
    R = prod(red)
    stride = _flat_stride(red, inp._stride[len(kept):])
    chunk = -(-R // p.nchunks)
    if stride is None or -(-R // chunk) != p.nchunks:
        raise BindingTooLarge(f"torchweb: a strided reduction of a tensor past the binding limit "
                              f"({limit} bytes, maxStorageBufferBindingSize) is not split", 0, limit)
    n = itemsize(inp.dtype)
    group = max(1, (limit - 2 * ALIGN) // (chunk * stride * n))
    one = p._replace(nchunks=1, nred=1)
    for k, idx in enumerate(_indices(kept)):
        base = inp._offset + sum(i * st for i, st in zip(idx, inp._stride))
        for c0 in range(0, p.nchunks, group):
            c1 = min(p.nchunks, c0 + group)
            full = c1 if c1 * chunk <= R else c1 - 1   # chunks [c0, full) whole; the last may be short
            cache = {}
            slot = out._offset + (k * p.nchunks + c0) * pair
            if full > c0:
                rows = View(inp._storage, (full - c0, chunk), (chunk * stride, stride),
                            base + c0 * chunk * stride, inp.dtype, inp.device)
                dst = View(out._storage, (full - c0, pair), (pair, 1), slot, out.dtype, out.device)
                run(one, windowed(dst, limit, cache), windowed(rows, limit, cache))
            if full < c1:
                tail = View(inp._storage, (R - full * chunk,), (stride,), base + full * chunk * stride,
                            inp.dtype, inp.device)
                dst = View(out._storage, (pair,), (1,), slot + (full - c0) * pair, out.dtype, out.device)
                run(one, windowed(dst, limit, cache), windowed(tail, limit, cache))


_PARTIAL_KIND = {"sum": "sum", "mean": "sum", "max": "max", "min": "min", "prod": "prod"}


def _reduce_by_slabs(run, limit, p, out, inp, kept, red):
    """A float32 reduction whose every output reads across the window: per slab of the first
    reduced dim (all outputs, slab rows, the other reduced dims whole), partial results into
    a temporary [slabs, outputs], then their reduction over the slabs."""
    if p.kind not in _PARTIAL_KIND or inp.dtype.name != "float32" or out.dtype.name != "float32" \
            or p.pairs_in or p.pairs_out or not red:
        raise BindingTooLarge(f"torchweb: {p.kind} over a tensor past the binding limit ({limit} bytes, "
                              f"maxStorageBufferBindingSize) is not split this way", 0, limit)
    whole = tuple((0, s) for s in kept)
    rest = tuple((0, s) for s in red[1:])
    fits = fits_in(limit, [inp])
    slabs = [b[0] for b in blocks(red[:1], lambda b: fits(whole + b + rest))]
    n_out = prod(kept)
    tmp = GPUStorage(out._storage.rt, n_out * len(slabs), out.dtype)
    first = p._replace(kind=_PARTIAL_KIND[p.kind], divisor=None)
    for j, slab in enumerate(slabs):
        dst = View(tmp, (n_out,), (1,), j * n_out, out.dtype, out.device)
        run(first, dst, windowed(part(inp, whole + (slab,) + rest), limit, {}))
    partials = View(tmp, (n_out, len(slabs)), (1, n_out), 0, out.dtype, out.device)
    run(p._replace(nred=1, divisor=prod(red) if p.kind == "mean" else None), out, partials)


def _flat_stride(shape, strides):
    """The one stride that walks dims of shape row-major, or None where they do not merge."""
    dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
    if not dims:
        return 1
    step = dims[-1][1]
    expect = step
    for s, st in reversed(dims):
        if st != expect:
            return None
        expect *= s
    return step


def _indices(shape):
    """Every index of shape, row-major."""
    out = [()]
    for s in shape:
        out = [i + (j,) for i in out for j in range(s)]
    return out


def split_rows(run, limit, table, others, rows_arg):
    """run(table_part, *others, rows=(lo, hi, num)) over windows of the rows of a 2-D table
    (an embedding's weight or its gradient), the others each seen through their windows."""
    num = table._shape[0]
    cache = {}
    others = [windowed(t, limit, cache) for t in others]
    for (lo, hi), cols in blocks(tuple(table._shape), fits_in(limit, [table])):
        if cols != (0, table._shape[1]):
            raise _Unsplittable(f"torchweb: a row of {table._shape[1]} elements is past this WebGPU "
                                  f"adapter's maxStorageBufferBindingSize ({limit} bytes)", 0, limit)
        run(windowed(part(table, ((lo, hi), cols)), limit, dict(cache)), *others, **{rows_arg: (lo, hi, num)})


def split_flat(run, limit, out):
    """run(block, start) over blocks of contiguous out's elements, each through its window
    (start: the block's first element's index in out)."""
    n = out.numel()
    flat = View(out._storage, (n,), (1,), out._offset, out.dtype, out.device)
    for ((a, b),) in blocks((n,), fits_in(limit, [flat])):
        run(windowed(part(flat, ((a, b),)), limit, {}), a)


def split_last_dim_rows(run, limit, out, inp):
    """run(out_rows, inp_rows) over blocks of the rows (last dim whole) of out and inp (one
    shape), each through its window: a softmax's rows."""
    *lead, row = out._shape
    fits = fits_in(limit, [out, inp])
    for block in blocks(tuple(lead), lambda b: fits(b + ((0, row),))):
        cache = {}
        block = block + ((0, row),)
        run(windowed(part(out, block), limit, cache), windowed(part(inp, block), limit, cache))


def split_target(run, limit, target, others):
    """run(target_view, (lo, hi), *others) for an index op's target (the tensor it reads or
    writes at computed positions: a big table), seen through one window of its buffer at a
    time; each dispatch does the positions whose element lies in [lo, hi) of its window, so
    together they do each once. The others (index tensors, the gathered output or the scattered
    source) are each seen through the window their view spans."""
    cache = {}
    others = [windowed(t, limit, cache) if hasattr(t, "_storage") else t for t in others]
    s = target._storage
    n = itemsize(target.dtype)
    lo, hi = span(target)
    step = limit // ALIGN * ALIGN
    start, end = lo * n // ALIGN * ALIGN, min(s.size, (hi * n + 3) & ~3)
    while start < end:
        size = min(step, s.size - start)
        view = View(WindowStorage(s, start, size), target._shape, target._stride, target._offset - start // n,
                    target.dtype, target.device)
        run(view, (0, size // n), *others)
        start += size


def split_row_views(run, limit, views):
    """run(r0, parts) over blocks of rows [r0, r1) of views (each [rows, row], one shape: a
    layer_norm's input, output and gradients), each block's part through its window."""
    rows, row = views[0]._shape
    fits = fits_in(limit, views)
    for ((r0, r1),) in blocks((rows,), lambda b: fits(b + ((0, row),))):
        cache = {}
        run(r0, [windowed(part(v, ((r0, r1), (0, row))), limit, cache) for v in views])
