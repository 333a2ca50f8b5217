"""The cpu device's convolution, pooling and padding primitives on numpy: the same interface
and the same window rules as backends/webgpu/conv.py (one loop over kernel offsets, each a
strided slice or a gather of the whole tensor, never a loop over pixels)."""

import itertools

from .cpu_arrays import np, view


def _acc_dtype(dtype):
    n = np()
    return n.float32 if dtype.is_floating_point else n.int64


def _offsets(kernel):
    return itertools.product(*(range(k) for k in kernel))


def _block(j, dilation, out_size, stride):
    return tuple(slice(jj * d, jj * d + (o - 1) * s + 1, s) if o else slice(0, 0)
                 for jj, d, o, s in zip(j, dilation, out_size, stride))


def _pads(S, kernel, stride, padding, dilation, out_size):
    """(before, after) per dim: after covers the last window (asymmetric for 'same')."""
    return [(p, max(0, (o - 1) * s + (k - 1) * d + 1 - p - n))
            for n, k, s, p, d, o in zip(S, kernel, stride, padding, dilation, out_size)]


def im2col(geom, out, inp, l0=0):
    n = np()
    kernel, stride, padding, dilation, out_size = geom.kernel, geom.stride, geom.padding, geom.dilation, geom.out_size
    x = view(inp)
    N, C = x.shape[:2]
    xp = n.pad(x, [(0, 0), (0, 0)] + _pads(x.shape[2:], kernel, stride, padding, dilation, out_size))
    parts = [xp[(Ellipsis,) + _block(j, dilation, out_size, stride)] for j in _offsets(kernel)]
    K = len(parts)
    cols = n.stack(parts, axis=2) if parts else n.zeros((N, C, 0) + tuple(out_size), x.dtype)
    L = int(n.prod(out_size)) if out_size else 1
    Lc = out.shape[2]
    n.copyto(view(out), cols.reshape(N, C * K, L)[:, :, l0:l0 + Lc], casting="unsafe")


def col2im(geom, out, cols, l0=0, accumulate=False):
    n = np()
    kernel, stride, padding, dilation, out_size = geom.kernel, geom.stride, geom.padding, geom.dilation, geom.out_size
    N, C = out.shape[:2]
    S = tuple(out.shape[2:])
    K = int(n.prod(kernel))
    L = int(n.prod(out_size))
    part = view(cols).astype(_acc_dtype(out.dtype))
    full = n.zeros((N, C * K, L), dtype=part.dtype)
    full[:, :, l0:l0 + part.shape[2]] = part
    c = full.reshape((N, C, K) + tuple(out_size))
    pads = _pads(S, kernel, stride, padding, dilation, out_size)
    xp = n.zeros((N, C) + tuple(s + a + b for s, (a, b) in zip(S, pads)), dtype=c.dtype)
    for k, j in enumerate(_offsets(kernel)):
        xp[(Ellipsis,) + _block(j, dilation, out_size, stride)] += c[:, :, k]
    inner = tuple(slice(p, p + s) for p, s in zip(padding, S))
    r = xp[(Ellipsis,) + inner]
    if accumulate:
        r = r + view(out)
    n.copyto(view(out), r, casting="unsafe")


# -- pooling -------------------------------------------------------------------------------
def _per_dim(g):
    """(S, O, k, s, p, d) of each spatial dim of ConvGeometry g."""
    return zip(g.in_size, g.out_size, g.kernel, g.stride, g.padding, g.dilation)


def _windows(geom, adaptive):
    """Per spatial dim: (list over window offsets of (position, valid), start, count)."""
    n = np()
    out = []
    for S, O, k, s, p, d in _per_dim(geom):
        o = n.arange(O, dtype=n.int64)
        if adaptive:
            start = (o * S) // O
            count = ((o + 1) * S + O - 1) // O - start
            steps = [(start + j, j < count) for j in range(int(count.max()) if O else 0)]
        else:
            start = o * s - p
            count = n.full(O, k, dtype=n.int64)
            steps = []
            for j in range(k):
                pos = start + j * d
                steps.append((pos, (pos >= 0) & (pos < S)))
        out.append((steps, start, count))
    return out


def _outer(arrays, fn):
    """fn folded over 1-D arrays broadcast against each other (np.ix_ would read bools as masks)."""
    k = len(arrays)
    grids = [a.reshape([-1 if i == j else 1 for j in range(k)]) for i, a in enumerate(arrays)]
    r = grids[0]
    for g in grids[1:]:
        r = fn(r, g)
    return r


def _divisor(geom, wins, adaptive, count_include_pad, divisor_override):
    n = np()
    if divisor_override:
        return n.float32(divisor_override)
    if adaptive:
        return _outer([w[2] for w in wins], lambda a, b: a * b)
    sizes = []
    for (S, O, k, s, p, d), (_, start, _) in zip(_per_dim(geom), wins):
        e = n.minimum(start + k, S + p)
        sizes.append(e - start if count_include_pad else n.minimum(e, S) - n.maximum(start, 0))
    return _outer(sizes, lambda a, b: a * b)


def pool(spec, out, indices, inp, nb):
    n = np()
    kind, geom, adaptive = spec.kind, spec.geom, spec.adaptive
    x = view(inp)
    if inp.dtype.name == "float16":
        x = x.astype(n.float32)
    S = geom.in_size
    wins = _windows(geom, adaptive)
    oshape = tuple(out.shape)
    if kind == "max":
        m = n.full(oshape, -n.inf if x.dtype.kind == "f" else n.iinfo(x.dtype).min, dtype=x.dtype)
        mi = n.full(oshape, -1, dtype=n.int64)
    else:
        m = n.zeros(oshape, dtype=_acc_dtype(inp.dtype))
    for combo in itertools.product(*(w[0] for w in wins)):
        pos = [n.clip(c[0], 0, max(s - 1, 0)) for c, s in zip(combo, S)]
        valid = _outer([c[1] for c in combo], lambda a, b: a & b)
        v = x[(Ellipsis,) + n.ix_(*pos)]
        if kind == "max":
            flat = n.zeros(valid.shape, dtype=n.int64)
            for i, p_ in enumerate(pos):
                shape = [1] * len(pos)
                shape[i] = -1
                flat = flat * S[i] + p_.reshape(shape)
            with n.errstate(invalid="ignore"):
                better = (mi < 0) | (v > m)
                if v.dtype.kind == "f":
                    better |= n.isnan(v)
            better &= valid
            m = n.where(better, v, m)
            mi = n.where(better, flat, mi)
        else:
            m = m + n.where(valid, v, 0)
    if kind == "max":
        n.copyto(view(out), m, casting="unsafe")
        if indices is not None:
            n.copyto(view(indices), n.maximum(mi, 0), casting="unsafe")
        return
    div = _divisor(geom, wins, adaptive, spec.count_include_pad, spec.divisor_override)
    with n.errstate(all="ignore"):
        if m.dtype.kind == "f":
            r = m / n.asarray(div, dtype=n.float32)
        else:
            r = n.trunc(m / div).astype(n.int64)
    n.copyto(view(out), n.broadcast_to(r, oshape), casting="unsafe")


def pool_backward(spec, grad_in, grad_out, indices):
    n = np()
    kind, geom, adaptive = spec.kind, spec.geom, spec.adaptive
    S, O = geom.in_size, geom.out_size
    g = view(grad_out).astype(n.float32)
    B = g.size // max(int(n.prod(O)), 1) if g.size else 0
    gin = n.zeros((B,) + S, dtype=n.float32)
    if kind == "max":
        flat = gin.reshape(B, -1)
        idx = view(indices).reshape(B, -1)
        n.add.at(flat, (n.arange(B)[:, None], idx), g.reshape(B, -1))
    else:
        wins = _windows(geom, adaptive)
        div = _divisor(geom, wins, adaptive, spec.count_include_pad, spec.divisor_override)
        gd = g.reshape((B,) + O) / n.asarray(div, dtype=n.float32)
        for combo in itertools.product(*(w[0] for w in wins)):
            pos = [n.clip(c[0], 0, max(s - 1, 0)) for c, s in zip(combo, S)]
            valid = _outer([c[1] for c in combo], lambda a, b: a & b)
            n.add.at(gin, (slice(None),) + n.ix_(*pos), n.where(valid, gd, 0))
    n.copyto(view(grad_in), gin.reshape(grad_in.shape), casting="unsafe")


# -- padding -------------------------------------------------------------------------------
def _pad_maps(mode, sizes, pads, out_sizes):
    n = np()
    maps = []
    for L, (before, _), O in zip(sizes, pads, out_sizes):
        x = n.arange(O, dtype=n.int64) - before
        if mode == "reflect":
            x = n.where(x < 0, -x, x)
            x = n.where(x >= L, 2 * (L - 1) - x, x)
        elif mode == "replicate":
            x = n.clip(x, 0, L - 1)
        elif mode == "circular":
            x = n.where(x < 0, x + L, x)
            x = n.where(x >= L, x - L, x)
        maps.append(x)
    return maps


def pad(spec, out, inp, nb):
    n = np()
    mode, pads, value = spec.mode, spec.pads, spec.value
    x = view(inp)
    L = x.shape[nb:]
    maps = _pad_maps(mode, L, pads, out.shape[nb:])
    valid = _outer([(m >= 0) & (m < s) for m, s in zip(maps, L)], lambda a, b: a & b)
    v = x[(Ellipsis,) + n.ix_(*[n.clip(m, 0, max(s - 1, 0)) for m, s in zip(maps, L)])] if x.size else \
        n.zeros(out.shape, x.dtype)
    n.copyto(view(out), n.where(valid, v, value), casting="unsafe")


def pad_backward(spec, grad_in, grad_out, nb):
    n = np()
    mode, pads = spec.mode, spec.pads
    L = tuple(grad_in.shape[nb:])
    O = tuple(grad_out.shape[nb:])
    g = view(grad_out).astype(n.float32)
    B = int(n.prod(grad_in.shape[:nb])) if nb else 1
    gin = n.zeros((B,) + L, dtype=n.float32)
    maps = _pad_maps(mode, L, pads, O)
    valid = _outer([(m >= 0) & (m < s) for m, s in zip(maps, L)], lambda a, b: a & b)
    if gin.size and g.size:
        n.add.at(gin, (slice(None),) + n.ix_(*[n.clip(m, 0, max(s - 1, 0)) for m, s in zip(maps, L)]),
                 n.where(valid, g.reshape((B,) + O), 0))
    n.copyto(view(grad_in), gin.reshape(grad_in.shape), casting="unsafe")


# -- interpolation -------------------------------------------------------------------------------
def _interp_taps_aa(isz, S, O, scale):
    """The antialiased window of each output (PyTorch's _compute_indices_min_size_weights_aa):
    (indices [O, T], weights [O, T], valid [O, T])."""
    import math
    n = np()
    f = n.float32
    scale = f(scale)
    support = f(isz * 0.5) * scale if scale >= 1.0 else f(isz * 0.5)
    invscale = f(1.0) / scale if scale >= 1.0 else f(1.0)
    T = int(math.ceil(support)) * 2 + 1
    center = (scale * (n.arange(O, dtype=f) + f(0.5))).astype(f)
    xmin = n.maximum((center - support + f(0.5)).astype(f).astype(n.int64), 0)
    xsize = n.clip(n.minimum((center + support + f(0.5)).astype(f).astype(n.int64), S) - xmin, 0, T)
    j = n.arange(T)
    valid = j[None, :] < xsize[:, None]
    x = ((((xmin[:, None] + j[None, :]).astype(f) - center[:, None]) + f(0.5)) * invscale).astype(f)
    ax = n.abs(x)
    if isz == 2:
        w = n.where(ax < 1, f(1) - ax, f(0))
    else:
        a = f(-0.5)
        w = n.where(ax < 1, ((a + f(2)) * ax - (a + f(3))) * ax * ax + f(1),
                    n.where(ax < 2, ((a * ax - f(5) * a) * ax + f(8) * a) * ax - f(4) * a, f(0)))
    w = n.where(valid, w, f(0)).astype(f)
    total = w.sum(axis=1, dtype=f)
    w = n.where(total[:, None] != 0, w / n.where(total == 0, f(1), total)[:, None], w).astype(f)
    return n.minimum(xmin[:, None] + j[None, :], S - 1), w, valid


def _interp_taps(mode, S, O, scale, align):
    """(indices [O, T], weights [O, T] float32, valid [O, T]) along one dim, as
    kernels/interpolate.py."""
    idx_w = _interp_taps_plain(mode, S, O, scale, align) if mode not in ("aa-linear", "aa-cubic") else None
    if idx_w is None:
        return _interp_taps_aa(2 if mode == "aa-linear" else 4, S, O, scale)
    idx, w = idx_w
    return idx, w, np().ones(idx.shape, bool)


def _interp_taps_plain(mode, S, O, scale, align):
    n = np()
    f = n.float32
    o = n.arange(O, dtype=n.int64)
    scale = f(scale)
    if mode == "nearest":
        if O == S:
            s = o
        elif O == 2 * S:
            s = o >> 1
        else:
            s = n.minimum(n.floor(o.astype(f) * scale).astype(n.int64), S - 1)
        return s[:, None], n.ones((O, 1), f)
    if mode == "nearest-exact":
        s = o if O == S else n.minimum(n.floor((o.astype(f) + f(0.5)) * scale).astype(n.int64), S - 1)
        return s[:, None], n.ones((O, 1), f)
    of = o.astype(f)
    src = scale * of if align else scale * (of + f(0.5)) - f(0.5)
    if mode == "linear":
        if not align:
            src = n.maximum(src, f(0))
        i0 = n.minimum(src.astype(n.int64), S - 1)
        l1 = (src - i0.astype(f)).astype(f)
        i1 = n.where(i0 < S - 1, i0 + 1, i0)
        return n.stack([i0, i1], 1), n.stack([f(1) - l1, l1], 1).astype(f)
    fl = n.floor(src)
    x = (src - fl).astype(f)
    A = f(-0.75)
    x1, x2, x3 = x + f(1), f(1) - x, f(2) - x
    w = [((A * x1 - f(5) * A) * x1 + f(8) * A) * x1 - f(4) * A,
         ((A + f(2)) * x - (A + f(3))) * x * x + f(1),
         ((A + f(2)) * x2 - (A + f(3))) * x2 * x2 + f(1),
         ((A * x3 - f(5) * A) * x3 + f(8) * A) * x3 - f(4) * A]
    b = fl.astype(n.int64)
    idx = n.stack([n.clip(b + j - 1, 0, S - 1) for j in range(4)], 1)
    return idx, n.stack(w, 1).astype(f)


def interpolate(spec, out, inp, nb):
    n = np()
    mode, scales, align = spec.mode, spec.scales, spec.align
    x = view(inp).astype(n.float32)
    S, O = x.shape[nb:], out.shape[nb:]
    taps = [_interp_taps(mode, s, o, sc, align) for s, o, sc in zip(S, O, scales)]
    acc = n.zeros(tuple(out.shape), n.float32)
    for combo in itertools.product(*(range(t[0].shape[1]) for t in taps)):
        v = x[(Ellipsis,) + n.ix_(*[t[0][:, j] for t, j in zip(taps, combo)])]
        ok = _outer([t[2][:, j] for t, j in zip(taps, combo)], lambda a, b: a & b)
        with n.errstate(invalid="ignore"):
            acc += n.where(ok, v * _outer([t[1][:, j] for t, j in zip(taps, combo)], lambda a, b: a * b), n.float32(0))
    n.copyto(view(out), acc, casting="unsafe")


def interpolate_backward(spec, grad_in, grad_out):
    n = np()
    mode, scales, align = spec.mode, spec.scales, spec.align
    r = len(scales)
    S, O = tuple(grad_in.shape[grad_in.dim() - r:]), tuple(grad_out.shape[grad_out.dim() - r:])
    g = view(grad_out).astype(n.float32)
    B = int(n.prod(grad_in.shape[:grad_in.dim() - r]))
    gin = n.zeros((B,) + S, n.float32)
    g = g.reshape((B,) + O)
    taps = [_interp_taps(mode, s, o, sc, align) for s, o, sc in zip(S, O, scales)]
    if gin.size and g.size:
        for combo in itertools.product(*(range(t[0].shape[1]) for t in taps)):
            w = _outer([t[1][:, j] for t, j in zip(taps, combo)], lambda a, b: a * b)
            ok = _outer([t[2][:, j] for t, j in zip(taps, combo)], lambda a, b: a & b)
            n.add.at(gin, (slice(None),) + n.ix_(*[t[0][:, j] for t, j in zip(taps, combo)]), n.where(ok, g * w, 0))
    n.copyto(view(grad_in), gin.reshape(grad_in.shape), casting="unsafe")


# -- max_unpool ----------------------------------------------------------------------------------
def _check_unpool_index(idx, L_out):
    n = np()
    if idx.size and (idx.min() < 0 or idx.max() >= L_out):
        bad = int(idx[(idx < 0) | (idx >= L_out)].reshape(-1)[0])
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size {L_out})")
    return n


def unpool(out, inp, indices, what):
    """out: contiguous [B, L_out], zeroed; inp, indices: contiguous [B, L_in]."""
    idx = view(indices)
    n = _check_unpool_index(idx, out.shape[-1])
    B = out.shape[0]
    view(out)[n.arange(B)[:, None], idx] = view(inp)


def unpool_backward(grad_in, grad_out, indices, what):
    idx = view(indices)
    n = _check_unpool_index(idx, grad_out.shape[-1])
    B = grad_in.shape[0]
    n.copyto(view(grad_in), view(grad_out)[n.arange(B)[:, None], idx], casting="unsafe")


# -- grid_sample ---------------------------------------------------------------------------------
def _gs_clip(x, size):
    n = np()
    g = ((x > 0) & (x < size - 1)).astype(n.float32)
    return n.clip(x, n.float32(0), n.float32(size - 1)).astype(n.float32), g


def _gs_reflect(x, lo2, hi2):
    n = np()
    f = n.float32
    if lo2 == hi2:
        return n.zeros_like(x), n.zeros_like(x)
    mn, span = f(lo2 / 2), f((hi2 - lo2) / 2)
    x = (x - mn).astype(f)
    m = n.where(x < 0, f(-1), f(1)).astype(f)
    x = n.abs(x)
    flips = n.floor(x / span)
    extra = (x - span * flips).astype(f)
    even = (flips % 2) == 0
    return n.where(even, extra + mn, span - extra + mn).astype(f), n.where(even, m, -m).astype(f)


def _gs_pad(x, size, pad, align):
    n = np()
    if pad == "border":
        return _gs_clip(x, size)
    if pad == "reflection":
        r, gr = _gs_reflect(x, 0, 2 * (size - 1)) if align else _gs_reflect(x, -1, 2 * size - 1)
        c, gc = _gs_clip(r, size)
        return c, (gr * gc).astype(n.float32)
    return x, n.ones_like(x)


def _gs_source(c, size, pad, align, cubic):
    """(coordinate, d coordinate / d grid) along one dim, as kernels/grid_sample.py."""
    n = np()
    f = n.float32
    c = c.astype(f)
    if align:
        u, m = ((c + f(1)) / f(2) * f(size - 1)).astype(f), f((size - 1) / 2)
    else:
        u, m = (((c + f(1)) * f(size) - f(1)) / f(2)).astype(f), f(size / 2)
    if cubic:
        return u, n.full_like(u, m)
    p, g = _gs_pad(u, size, pad, align)
    with n.errstate(invalid="ignore"):
        p = n.where(n.isnan(p) | (n.abs(p) > 2.0 ** 30), f(-100), p).astype(f)
    return p, (g * m).astype(f)


def _cubic(t, grad=False):
    n = np()
    f = n.float32
    A = f(-0.75)
    if not grad:
        x1, x2, x3 = t + f(1), f(1) - t, f(2) - t
        w = [((A * x1 - f(5) * A) * x1 + f(8) * A) * x1 - f(4) * A, ((A + f(2)) * t - (A + f(3))) * t * t + f(1),
             ((A + f(2)) * x2 - (A + f(3))) * x2 * x2 + f(1), ((A * x3 - f(5) * A) * x3 + f(8) * A) * x3 - f(4) * A]
    else:
        x0, x1, x2, x3 = f(-1) - t, -t, f(1) - t, f(2) - t
        w = [(f(-3) * A * x0 - f(10) * A) * x0 - f(8) * A, (f(-3) * (A + f(2)) * x1 - f(2) * (A + f(3))) * x1,
             (f(3) * (A + f(2)) * x2 - f(2) * (A + f(3))) * x2, (f(3) * A * x3 - f(10) * A) * x3 + f(8) * A]
    return [a.astype(f) for a in w]


def _gs_taps(S, grid, mode, pad, align):
    """[(integer positions per dim, in-bounds mask, weight, [d weight / d ix_d])], and the
    per-dim multipliers m_d; arrays shaped like the grid's locations [N, *O]."""
    n = np()
    f = n.float32
    r = len(S)
    ix, m = [], []
    for d in range(r):
        a, b = _gs_source(grid[..., r - 1 - d], S[d], pad, align, mode == "bicubic")
        ix.append(a)
        m.append(b)
    taps = []
    if mode == "nearest":
        pos = [n.rint(a).astype(n.int64) for a in ix]
        taps.append((pos, f(1), [f(0)] * r))
    elif mode == "bilinear":
        fl = [n.floor(a) for a in ix]
        for bits in range(1 << r):
            b = [(bits >> (r - 1 - d)) & 1 for d in range(r)]
            pos = [fl[d].astype(n.int64) + b[d] for d in range(r)]
            ws = [(ix[d] - fl[d]) if b[d] else (fl[d] + f(1) - ix[d]) for d in range(r)]
            w = ws[0]
            for e in ws[1:]:
                w = w * e
            dws = []
            for d in range(r):
                o = n.ones_like(ix[0])
                for e in range(r):
                    if e != d:
                        o = o * ws[e]
                dws.append(o if b[d] else -o)
            taps.append((pos, w, dws))
    else:
        fl = [n.floor(a) for a in ix]
        cy, cx = _cubic((ix[0] - fl[0]).astype(f)), _cubic((ix[1] - fl[1]).astype(f))
        gy, gx = _cubic((ix[0] - fl[0]).astype(f), True), _cubic((ix[1] - fl[1]).astype(f), True)
        for i in range(4):
            for j in range(4):
                raw = [fl[0].astype(n.int64) - 1 + j, fl[1].astype(n.int64) - 1 + i]
                pos = []
                for d in range(2):
                    p_, _ = _gs_pad(raw[d].astype(f), S[d], pad, align)
                    pos.append(n.trunc(p_).astype(n.int64))
                taps.append((pos, cy[j] * cx[i], [gy[j] * cx[i], cy[j] * gx[i]]))
    out = []
    for pos, w, dws in taps:
        ok = n.ones(grid.shape[:-1], bool)
        for d in range(r):
            ok &= (pos[d] >= 0) & (pos[d] < S[d])
        out.append(([n.clip(pp, 0, S[d] - 1) for d, pp in enumerate(pos)], ok, w, dws))
    return out, m


def _gs_gather(x, pos):
    """x [N, C, *S], pos per dim [N, *O] -> [N, C, *O]."""
    n = np()
    N = x.shape[0]
    bidx = n.arange(N).reshape((N,) + (1,) * (pos[0].ndim - 1))
    v = x[(bidx, slice(None)) + tuple(pos)]          # [N, *O, C]: advanced indices first
    return n.moveaxis(v, -1, 1)


def grid_sample(spec, out, inp, grid):
    n = np()
    mode, pad, align = spec.mode, spec.padding_mode, spec.align
    x = view(inp).astype(n.float32)
    g = view(grid).astype(n.float32)
    S = x.shape[2:]
    acc = n.zeros(tuple(out.shape), n.float32)
    taps, _ = _gs_taps(S, g, mode, pad, align)
    for pos, ok, w, _ in taps:
        v = _gs_gather(x, pos)
        acc += n.where(ok[:, None], v * n.asarray(w, n.float32)[:, None] if n.ndim(w) else v * w, n.float32(0))
    n.copyto(view(out), acc, casting="unsafe")


def grid_sample_backward(spec, grad_in, grad_grid, grad_out, inp, grid):
    n = np()
    mode, pad, align = spec.mode, spec.padding_mode, spec.align
    f = n.float32
    x = view(inp).astype(f)
    g = view(grid).astype(f)
    go = view(grad_out).astype(f)
    S = x.shape[2:]
    r = len(S)
    N = x.shape[0]
    taps, m = _gs_taps(S, g, mode, pad, align)
    gx = [n.zeros(g.shape[:-1], f) for _ in range(r)]
    gi = view(grad_in) if grad_in is not None else None
    bidx = n.arange(N).reshape((N,) + (1,) * (g.ndim - 2))
    for pos, ok, w, dws in taps:
        wv = n.asarray(w, f)
        if gi is not None:
            contrib = n.where(ok[:, None], go * (wv[:, None] if wv.ndim else wv), f(0))   # [N, C, *O]
            n.add.at(gi, (bidx, slice(None)) + tuple(pos), n.moveaxis(contrib, 1, -1))
        if grad_grid is not None and mode != "nearest":
            v = n.where(ok[:, None], _gs_gather(x, pos), f(0))
            s = (v * go).sum(axis=1)                                                        # [N, *O]
            for d in range(r):
                if mode == "bicubic":
                    gx[d] -= s * dws[d]
                else:
                    gx[d] += s * dws[d]
    if grad_grid is not None:
        gg = n.stack([(m[r - 1 - k] * gx[r - 1 - k]).astype(f) for k in range(r)], -1)
        n.copyto(view(grad_grid), gg, casting="unsafe")
