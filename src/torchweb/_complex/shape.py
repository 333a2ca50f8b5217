"""Views and shape ops of complex tensors: the same op on the pair view, whose trailing dim of
2 stays last (so views stay views and share storage), and indexing, cat/stack, in-place writes."""

from .._is_tensor import is_tensor
from .._size import wrap_dim
from ..ops.join import cat as _cat, stack as _stack
from .._complex_tensor import ComplexTensor, wrap, pairs
from . import math as M


def _shape(args, kw=None):
    if kw is not None:
        return tuple(kw)
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return tuple(args)


def _d(x, dim, extra=0):
    return wrap_dim(dim, x.dim() + extra)


def reshape(x, *shape, shape_kw=None):
    return wrap(pairs(x._r.reshape(*_shape(shape), 2)))


def view(x, *shape, size=None, dtype=None):
    if dtype is not None:
        raise NotImplementedError("view(dtype) is not implemented for complex tensors in torchweb")
    return wrap(x._r.view(*_shape(shape, size), 2))


def permute(x, *dims, dims_kw=None):
    d = [_d(x, i) for i in _shape(dims)]
    return wrap(x._r.permute(*d, x.dim()))


def transpose(x, dim0, dim1):
    return wrap(x._r.transpose(_d(x, dim0), _d(x, dim1)))


def t(x):
    return x if x.dim() < 2 else transpose(x, 0, 1)


def unsqueeze(x, dim):
    return wrap(x._r.unsqueeze(_d(x, dim, 1)))


def squeeze(x, dim=None):
    if dim is None:
        dims = [i for i, n in enumerate(x.shape) if n == 1]
    else:
        dims = [_d(x, i) for i in ((dim,) if isinstance(dim, int) else dim) if x.shape[_d(x, i)] == 1]
    r = x._r
    for i in sorted(dims, reverse=True):
        r = r.squeeze(i)
    return wrap(r)


def flatten(x, start_dim=0, end_dim=-1):
    if x.dim() == 0:
        return reshape(x, 1)
    return wrap(pairs(x._r.flatten(_d(x, start_dim), _d(x, end_dim))))


def unflatten(x, dim, sizes):
    return wrap(x._r.unflatten(_d(x, dim), sizes))


def narrow(x, dim, start, length):
    return wrap(x._r.narrow(_d(x, dim), start, length))


def select(x, dim, index):
    return wrap(x._r.select(_d(x, dim), index))


def expand(x, *sizes):
    return wrap(x._r.expand(*_shape(sizes), 2))


def flip(x, dims):
    dims = (dims,) if isinstance(dims, int) else dims
    return wrap(x._r.flip([_d(x, i) for i in dims]))


def roll(x, shifts, dims=None):
    if dims is None:
        return reshape(roll(flatten(x), shifts, 0), x.shape)
    dims = [_d(x, i) for i in ((dims,) if isinstance(dims, int) else dims)]
    return wrap(x._r.roll(shifts, dims))


def repeat(x, *sizes):
    return wrap(x._r.repeat(*_shape(sizes), 1))


def chunk(x, chunks, dim=0):
    return tuple(wrap(r) for r in x._r.chunk(chunks, _d(x, dim)))


def split(x, split_size_or_sections, dim=0):
    return tuple(wrap(r) for r in x._r.split(split_size_or_sections, _d(x, dim)))


def unbind(x, dim=0):
    return tuple(wrap(r) for r in x._r.unbind(_d(x, dim)))


def _index(x, idx):
    """idx for the pair view: an Ellipsis must not swallow the trailing pair dim."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    if any(i is Ellipsis for i in idx):
        idx = idx + (slice(None),)
    return idx


def getitem(x, idx):
    return wrap(pairs(x._r[_index(x, idx)]))


def as_pairs(value, like):
    """value (complex/real tensor or number) as a float32 pair tensor broadcastable to like's."""
    if isinstance(value, ComplexTensor):
        return value._r
    if is_tensor(value):
        re, im = M.parts(M.from_parts(value.float(), None))
        return _stack([re, im], -1)
    v = complex(value)
    return like.new_tensor([v.real, v.imag])


def setitem(x, idx, value):
    x._r[_index(x, idx)] = as_pairs(value, x._r)


def cat(tensors, dim=0, *, out=None):
    zs = [as_complex(t) for t in tensors]
    if out is not None:
        raise NotImplementedError("cat(out=) is not implemented for complex tensors in torchweb")
    return wrap(_cat([z._r for z in zs], wrap_dim(dim, max(z.dim() for z in zs))))


def stack(tensors, dim=0, *, out=None):
    zs = [as_complex(t) for t in tensors]
    if out is not None:
        raise NotImplementedError("stack(out=) is not implemented for complex tensors in torchweb")
    return wrap(_stack([z._r for z in zs], wrap_dim(dim, zs[0].dim() + 1)))


def printed_edges(x, edge):
    """The printed corners of a big tensor (_printing.py reads only these)."""
    for d in range(x.dim()):
        n = x.shape[d]
        if n > 2 * edge:
            x = cat([narrow(x, d, 0, edge), narrow(x, d, n - edge, edge)], d)
    return x


def as_complex(t):
    return t if isinstance(t, ComplexTensor) else M.from_parts(t, None)


def copy_(x, src, non_blocking=False):
    x._r.copy_(as_pairs(src, x._r).expand(x._r.shape))
    return x


def fill_(x, value):
    return copy_(x, value)


def zero_(x):
    x._r.zero_()
    return x


def in_place(fn):
    """x op= y written into x's pair view (its storage and version)."""
    def op(self, *args, **kwargs):
        r = fn(self, *args, **kwargs)._r
        self._r.copy_(r)
        return self
    return op
