"""Complex arithmetic as float32 ops on the parts: + - * / neg, conj, abs, angle, exp, pow by a
real number, sum/mean and matmul. An operand is a complex tensor, a real tensor or a Python
number (complex too); its parts are (re, im) with im None for a real one, so a real operand
costs no zeros."""

import numbers

from .. import _dtype as D
from .._creation import full_like, zeros_like
from .._is_tensor import is_tensor
from .._size import broadcast_shapes
from ..linalg import vector_norm
from ..ops.join import stack
from .._size import wrap_dim
from .._complex_tensor import ComplexTensor, wrap


def parts(x):
    """(re, im) of an operand; im None for a real tensor or number."""
    if isinstance(x, ComplexTensor):
        r = x._r
        return r.select(-1, 0), r.select(-1, 1)
    if isinstance(x, complex):
        return x.real, x.imag
    if is_tensor(x) and not x.dtype.is_floating_point:
        return x.float(), None
    return x, None


def from_parts(re, im):
    """The complex tensor of parts re and im (tensors or numbers; im None: zero)."""
    like = re if is_tensor(re) else im
    if not is_tensor(like):
        raise TypeError("a complex result needs a tensor operand")
    if like.dtype is not D.float32:
        like = like.float()
    re = full_like(like, re) if not is_tensor(re) else re
    im = zeros_like(like) if im is None else full_like(like, im) if not is_tensor(im) else im
    if re.shape != im.shape:
        shape = broadcast_shapes(re.shape, im.shape)
        re, im = re.expand(shape), im.expand(shape)
    return wrap(stack([re.float(), im.float()], -1))


def _add(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def _neg(a):
    return None if a is None else -a


def _mul(a, b):
    return None if a is None or b is None else a * b


def add(x, y, *, alpha=1):
    (ar, ai), (br, bi) = parts(x), parts(y)
    if alpha != 1:
        br, bi = br * alpha, _mul(bi, alpha)
    return from_parts(ar + br, _add(ai, bi))


def sub(x, y, *, alpha=1):
    (ar, ai), (br, bi) = parts(x), parts(y)
    if alpha != 1:
        br, bi = br * alpha, _mul(bi, alpha)
    return from_parts(ar - br, _add(ai, _neg(bi)))


def mul(x, y):
    (ar, ai), (br, bi) = parts(x), parts(y)
    re = _add(ar * br, _neg(_mul(ai, bi)))
    im = _add(_mul(ar, bi), _mul(ai, br))
    return from_parts(re, im)


def div(x, y, *, rounding_mode=None):
    if rounding_mode is not None:
        raise RuntimeError(f"div with rounding_mode='{rounding_mode}' is not supported for complex inputs")
    (ar, ai), (br, bi) = parts(x), parts(y)
    if bi is None:
        return from_parts(ar / br, None if ai is None else ai / br)
    d = br * br + bi * bi
    re = _add(ar * br, _mul(ai, bi))
    im = _add(_mul(ai, br), _neg(ar * bi))
    return from_parts(re / d, im / d)


def neg(x):
    re, im = parts(x)
    return from_parts(-re, -im)


def conj(x):
    re, im = parts(x)
    return from_parts(re, -im)


def abs(x):
    """|z|, with PyTorch's zero gradient at 0 (the norm of the pair)."""
    return vector_norm(x._r, 2, -1)


def angle(x):
    re, im = parts(x)
    return im.atan2(re)


def exp(x):
    re, im = parts(x)
    m = re.exp()
    return from_parts(m * im.cos(), m * im.sin())


def pow(x, p):
    """z ** p for a real number p (PyTorch's complex pow: exp(p log z)); a small natural p
    multiplies (exact where PyTorch's is)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise NotImplementedError("torchweb raises a complex tensor only to a real Python number")
    if p == int(p) and 0 <= p <= 4:
        if p == 0:
            return from_parts(full_like(x._r.select(-1, 0), 1.0), None)
        out = x
        for _ in range(int(p) - 1):
            out = mul(out, x)
        return out
    re, im = parts(x)
    mag = (re * re + im * im) ** (p / 2)
    th = im.atan2(re) * p
    return from_parts(mag * th.cos(), mag * th.sin())


def _dims(x, dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return (wrap_dim(dim, x.dim()),)
    return tuple(wrap_dim(d, x.dim()) for d in dim)


def _reduce(name, x, dim, keepdim, dtype):
    if dtype is not None and str(dtype) != "torch.complex64":
        raise RuntimeError(f"{name}: a complex input needs a complex dtype, got {dtype}")
    r = x._r
    d = _dims(x, dim)
    if d is None or d == ():
        d = tuple(range(x.dim()))
    if not d:
        return wrap(r.clone())
    return wrap(getattr(r, name)(d, keepdim=keepdim))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    return _reduce("sum", input, dim, keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return _reduce("mean", input, dim, keepdim, dtype)


def matmul(x, y):
    (ar, ai), (br, bi) = parts(x), parts(y)
    re = _add(ar @ br, _neg(None if ai is None or bi is None else ai @ bi))
    im = _add(None if bi is None else ar @ bi, None if ai is None else ai @ br)
    return from_parts(re, im)


def eq(x, y):
    (ar, ai), (br, bi) = parts(x), parts(y)
    same = ar == br
    return same & ((ai if ai is not None else 0.0) == (bi if bi is not None else 0.0))


def ne(x, y):
    return ~eq(x, y)


def is_number(v):
    return isinstance(v, (int, float, complex)) and not isinstance(v, bool)



