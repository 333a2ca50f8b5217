"""Shapes of float64 tensors: reshape/view, (un)squeeze, flatten, cat/stack, constant pad,
and indexing (ints, slices, None, Ellipsis, one advanced index: integer or boolean)."""

import itertools
import math
from array import array

from .._size import Size
from .tensor import from_values, is_host64, make, values_of
from .._float64 import refusal
from .._is_tensor import is_tensor
from .._creation import tensor
from .elementwise import broadcast_shapes, expand


def _wrap(d, n):
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def reshape(x, *shape):
    shape = list(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)
    n = x.numel()
    if shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = n // known if known else 0
    if math.prod(shape) != n:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
    return make(x._data, Size(shape))


def unsqueeze(x, dim):
    shape = list(x._shape)
    shape.insert(_wrap(dim, len(shape) + 1), 1)
    return make(x._data, Size(shape))


def squeeze(x, dim=None):
    shape = list(x._shape)
    if dim is None:
        return make(x._data, Size(s for s in shape if s != 1))
    dims = {_wrap(d, max(len(shape), 1)) for d in ((dim,) if isinstance(dim, int) else dim)}
    return make(x._data, Size(s for i, s in enumerate(shape) if not (i in dims and s == 1)))


def flatten(x, start_dim=0, end_dim=-1):
    shape = list(x._shape)
    if not shape:
        return make(x._data, Size((1,)))
    s, e = _wrap(start_dim, len(shape)), _wrap(end_dim, len(shape))
    return make(x._data, Size(shape[:s] + [math.prod(shape[s:e + 1])] + shape[e + 1:]))


def cat(tensors, dim=0):
    parts = [values_of(t, "cat") for t in tensors]
    parts = [(v, s) for v, s in parts if tuple(s) != (0,)] or parts[:1]   # PyTorch skips 1-D empties
    first = tuple(parts[0][1])
    d = _wrap(dim, len(first))
    for _, s in parts:
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first)) if i != d):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                               f"{list(first)}, got {list(s)}")
    outer, inner = math.prod(first[:d]), math.prod(first[d + 1:])
    out = array("d")
    for o in range(outer):
        for v, s in parts:
            block = s[d] * inner
            out.extend(v[o * block:(o + 1) * block] if isinstance(v, array) else
                       array("d", v[o * block:(o + 1) * block]))
    shape = list(first)
    shape[d] = sum(s[d] for _, s in parts)
    return make(out, Size(shape))


def stack(tensors, dim=0):
    parts = [t if is_host64(t) else from_values(*values_of(t, "stack")) for t in tensors]
    shape = tuple(parts[0]._shape)
    for t in parts:
        if tuple(t._shape) != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} "
                               f"at entry 0 and {list(t._shape)} at another entry")
    d = _wrap(dim, len(shape) + 1)
    return cat([unsqueeze(t, d) for t in parts], d)


def pad(x, pad, mode="constant", value=None):
    if mode != "constant":
        raise refusal(f"pad(mode='{mode}')")
    shape = list(x._shape)
    out_shape, region = list(shape), [slice(None)] * len(shape)
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_shape[d] = shape[d] + lo + hi
        region[d] = slice(lo, lo + shape[d])
    out = from_values([0.0 if value is None else float(value)] * math.prod(out_shape), out_shape)
    setitem(out, tuple(region), x)
    return out


# -- indexing ------------------------------------------------------------------------------
def _positions(x, key):
    """(out shape, flat positions in x's array) of x[key]."""
    key = key if isinstance(key, tuple) else (key,)
    consumed = sum(1 if k is not None and k is not Ellipsis and not _is_bool_index(k) else
                   (_bool_dims(k) if _is_bool_index(k) else 0) for k in key)
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (x.dim() - consumed) + key[i + 1:]
    else:
        key = key + (slice(None),) * (x.dim() - consumed)
    shape, strides = list(x._shape), list(x._stride)
    axes, dim, advanced = [], 0, 0      # axes: (out shape part, offsets)
    for k in key:
        if k is None:
            axes.append(((1,), [0]))
            continue
        if dim >= len(shape) and not (_is_bool_index(k) and _bool_dims(k) == 0):
            raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
        if isinstance(k, bool) or _is_bool_index(k):
            advanced += 1
            mask, mshape = _bool_values(k)
            n = len(mshape)
            if tuple(mshape) != tuple(shape[dim:dim + n]):
                raise IndexError(f"The shape of the mask {list(mshape)} at index {dim} does not "
                                 f"match the shape of the indexed tensor {list(shape)}")
            offs = [sum(i * s for i, s in zip(idx, strides[dim:dim + n]))
                    for idx, m in zip(itertools.product(*(range(s) for s in mshape)), mask) if m]
            axes.append(((len(offs),), offs))
            dim += n
        elif isinstance(k, int) or (is_tensor(k) and k.dim() == 0 and not k.dtype.is_floating_point):
            i = int(k)
            if not -shape[dim] <= i < shape[dim]:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")
            axes.append(((), [(i % shape[dim]) * strides[dim]]))
            dim += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            r = range(*k.indices(shape[dim]))
            axes.append(((len(r),), [j * strides[dim] for j in r]))
            dim += 1
        elif is_tensor(k) or isinstance(k, (list, tuple)):
            advanced += 1
            vals, ishape = values_of(k, "index", any_device=True) if is_tensor(k) else \
                (_flat(k), (len(k),) if not k or not isinstance(k[0], (list, tuple)) else None)
            if ishape is None:
                vals, ishape = values_of(tensor(k), "index", any_device=True)
            offs = []
            for v in vals:
                i = int(v)
                if not -shape[dim] <= i < shape[dim]:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")
                offs.append((i % shape[dim]) * strides[dim])
            axes.append((tuple(ishape), offs))
            dim += 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(k).__name__})")
    if advanced > 1:
        raise refusal("indexing with several advanced indices")
    out_shape = Size(s for part, _ in axes for s in part)
    positions = [sum(c) for c in itertools.product(*(offs for _, offs in axes))]
    return out_shape, positions


def _is_bool_index(k):
    if is_tensor(k):
        return k.dtype.name == "bool"
    return isinstance(k, (list, tuple)) and bool(k) and all(isinstance(v, bool) for v in k)


def _bool_dims(k):
    return k.dim() if is_tensor(k) else 1


def _bool_values(k):
    if isinstance(k, bool):
        return [k], ()
    if is_tensor(k):
        return [bool(v) for v in k.detach()._flat_values()], tuple(k.shape)
    return list(k), (len(k),)


def _flat(k):
    return [int(v) for v in k]


def getitem(x, key):
    shape, positions = _positions(x, key)
    data = x._data
    return make(array("d", (data[p] for p in positions)), shape)


def setitem(x, key, value):
    shape, positions = _positions(x, key)
    vals, vshape = values_of(value, "index_put", any_device=True)
    vals = expand(vals, vshape, broadcast_shapes(vshape, shape, what="setitem") if vshape else shape)
    if len(vals) == 1 and len(positions) != 1:
        vals = vals * len(positions)
    data = x._data
    for p, v in zip(positions, vals):
        data[p] = v


def permute(x, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    n = x.dim()
    dims = tuple(_wrap(d, max(n, 1)) for d in dims)
    if sorted(dims) != list(range(n)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{n} is not equal to len(dims) = {len(dims)}" if len(dims) != n else
                           f"permute(): duplicate dims are not allowed: {list(dims)}")
    shape = [x._shape[d] for d in dims]
    strides = [x._stride[d] for d in dims]
    data = x._data
    return make(array("d", (data[sum(i * s for i, s in zip(idx, strides))]
                            for idx in itertools.product(*(range(s) for s in shape)))), Size(shape))


def transpose(x, dim0, dim1):
    n = max(x.dim(), 1)
    order = list(range(x.dim()))
    if x.dim():
        a, b = _wrap(dim0, n), _wrap(dim1, n)
        order[a], order[b] = order[b], order[a]
    return permute(x, order)


def t(x):
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.dim()}D")
    return transpose(x, 0, 1) if x.dim() == 2 else x


def printed_edges(t, edge):
    """Only the printed corners (what _printing shows of a big tensor): HostFloat64Tensor._edges."""
    for d in range(t.dim()):
        n = t._shape[d]
        if n > 2 * edge:
            lead = (slice(None),) * d
            t = cat([t[lead + (slice(0, edge),)], t[lead + (slice(n - edge, n),)]], d)
    return t
