"""The *_copy functions (torch.view_copy, permute_copy, ...): the view op's result as a fresh
contiguous tensor, so it shares nothing with input. Each is the view op followed by clone, made
here from a table of (name, view) pairs; out= copies into a given tensor (a tuple for the
splitting ones)."""

from ..registry import define
from ..._tensor import Tensor
from ..shape import as_strided
from .splits import split_with_sizes


def _view(name):
    def get(input, *args, **kw):
        return getattr(Tensor, name)(input, *args, **kw)
    return get


def _write(result, out):
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            o.copy_(r)
        return out
    return out.copy_(result)


def _fresh(r):
    return tuple(t.clone() for t in r) if isinstance(r, tuple) else r.clone()


def _make(name, sig, view, method=False):
    def fn(input, *args, out=None, **kw):
        return _write(_fresh(view(input, *args, **kw)), out)
    fn.__name__ = fn.__qualname__ = name
    define(name, "shape", method=method,
           doc=f"{name}{sig} -> Tensor\n\n{name[:-5]}'s result as a new tensor that shares no storage.")(fn)


def _as_strided(input, size, stride, storage_offset=None):
    return as_strided(input, size, stride, storage_offset)


def _slice(input, dim=0, start=None, end=None, step=1):
    d = dim % max(input.dim(), 1)
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _expand(input, size, *, implicit=False):
    return input.expand(*size)


def _split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


for _name, _sig, _fn in (
        ("view_copy", "(input, size, *, out=None)", lambda x, size: x.view(*size) if not isinstance(size, int) else x.view(size)),
        ("permute_copy", "(input, dims, *, out=None)", _view("permute")),
        ("transpose_copy", "(input, dim0, dim1, *, out=None)", _view("transpose")),
        ("t_copy", "(input, *, out=None)", _view("t")),
        ("unsqueeze_copy", "(input, dim, *, out=None)", _view("unsqueeze")),
        ("squeeze_copy", "(input, dim=None, *, out=None)", _view("squeeze")),
        ("select_copy", "(input, dim, index, *, out=None)", _view("select")),
        ("slice_copy", "(input, dim=0, start=None, end=None, step=1, *, out=None)", _slice),
        ("diagonal_copy", "(input, offset=0, dim1=0, dim2=1, *, out=None)", _view("diagonal")),
        ("expand_copy", "(input, size, *, implicit=False, out=None)", _expand),
        ("detach_copy", "(input, *, out=None)", _view("detach")),
        ("alias_copy", "(input, *, out=None)", lambda x: x.view(x.shape)),
        ("unbind_copy", "(input, dim=0, *, out=None)", _view("unbind")),
        ("split_copy", "(input, split_size, dim=0, *, out=None)", _view("split")),
        ("split_with_sizes_copy", "(input, split_sizes, dim=0, *, out=None)", _split_with_sizes),
        ("unfold_copy", "(input, dimension, size, step, *, out=None)", _view("unfold")),
        ("as_strided_copy", "(input, size, stride, storage_offset=None, *, out=None)", _as_strided)):
    _make(_name, _sig, _fn)
_make("narrow_copy", "(input, dim, start, length, *, out=None)", _view("narrow"), method=True)
