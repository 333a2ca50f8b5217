"""complex64 tensors (float32 pairs; _complex_tensor.py says how they are held and differentiated).

install() gives the complex tensor its methods (every other Tensor method raises, naming the op
and complex), routes the torch.* functions complex tensors support here when an argument is
complex (the registry's op otherwise, unchanged: no cost on real tensors), and fills the
creation routes (_complex_routes.py)."""

import warnings

from .. import _dtype as D
from .._complex_routes import ROUTES, refusal
from .._creation import full
from .._type_routes import refusing, routed
from .._tensor_methods import OPERATORS, INPLACE, METHODS, _cuda
from ..ops.registry import method_names
from . import conjugate, creation as C, math as M, shape as S
from .._complex_tensor import ComplexTensor as Z, wrap

ROUTES.update(tensor=C.from_data, full=C.full, random=C.random, from_real=C.from_real,
              binary=lambda name, a, b: getattr(M, name)(a, b))

# methods that work on a complex tensor as Tensor defines them (metadata)
_KEEP = {"type", "__hash__", "dim", "size", "numel", "element_size", "is_floating_point", "stride",
         "storage_offset", "__len__", "item", "tolist", "ndimension", "nelement", "__str__",
         "is_contiguous", "get_device", "is_inference", "new_tensor", "new_zeros", "new_ones",
         "new_empty", "new_full", "__format__", "__bool__", "__float__", "__int__", "__repr__"}


def _binary(fn, reflected=False):
    def op(self, other, **kw):
        if not (M.is_number(other) or hasattr(other, "dtype")):
            return NotImplemented
        return fn(other, self, **kw) if reflected else fn(self, other, **kw)
    return op


def _to(self, *args, **kwargs):
    """Tensor.to: a device move keeps complex64; a real dtype keeps the real part (PyTorch warns)."""
    dtype = kwargs.pop("dtype", None)
    rest = []
    for a in args:
        if isinstance(a, D.dtype) or type(a).__name__ == "_UnsupportedDtype":
            dtype = a
        elif hasattr(a, "dtype") and hasattr(a, "device"):   # to(other)
            dtype, kwargs["device"] = a.dtype, a.device
        else:
            rest.append(a)
    r = self._r.to(*rest, **kwargs)
    out = wrap(r)
    if dtype is not None and D.as_dtype(dtype) is not D.complex64:
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        return M.parts(out)[0].to(D.as_dtype(dtype))
    return out


def _methods():
    m = {
        "__add__": _binary(M.add), "__radd__": _binary(M.add, True),
        "__sub__": _binary(M.sub), "__rsub__": _binary(M.sub, True),
        "__mul__": _binary(M.mul), "__rmul__": _binary(M.mul, True),
        "__truediv__": _binary(M.div), "__rtruediv__": _binary(M.div, True),
        "__matmul__": _binary(M.matmul), "__rmatmul__": _binary(M.matmul, True),
        "__pow__": lambda self, p: M.pow(self, p),
        "__eq__": _binary(M.eq), "__ne__": _binary(M.ne),
        "__neg__": M.neg, "__pos__": lambda self: self, "__abs__": M.abs,
        "__getitem__": S.getitem, "__setitem__": S.setitem,
        "__iter__": lambda self: iter(S.unbind(self, 0)),
        "__hash__": lambda self: id(self),
        "add": _binary(M.add), "sub": _binary(M.sub), "subtract": _binary(M.sub),
        "mul": _binary(M.mul), "multiply": _binary(M.mul), "div": _binary(M.div),
        "divide": _binary(M.div), "true_divide": _binary(M.div), "matmul": _binary(M.matmul),
        "mm": _binary(M.matmul), "bmm": _binary(M.matmul), "pow": M.pow,
        "eq": _binary(M.eq), "ne": _binary(M.ne), "neg": M.neg, "negative": M.neg,
        "abs": M.abs, "absolute": M.abs, "angle": M.angle, "exp": M.exp, "conj": conjugate.conj,
        "conj_physical": M.conj, "resolve_conj": lambda self: self, "resolve_neg": lambda self: self,
        "is_conj": lambda self: False, "is_neg": lambda self: False,
        "adjoint": lambda self: self.transpose(-2, -1).conj(),
        "sum": M.sum, "mean": M.mean,
        "reshape": S.reshape, "view": S.view, "permute": S.permute, "transpose": S.transpose,
        "swapaxes": S.transpose, "swapdims": S.transpose, "t": S.t, "unsqueeze": S.unsqueeze,
        "squeeze": S.squeeze, "flatten": S.flatten, "unflatten": S.unflatten, "narrow": S.narrow,
        "select": S.select, "expand": S.expand, "flip": S.flip, "roll": S.roll, "repeat": S.repeat,
        "chunk": S.chunk, "split": S.split, "unbind": S.unbind,
        "view_as": lambda self, other: S.view(self, other.shape),
        "reshape_as": lambda self, other: S.reshape(self, other.shape),
        "expand_as": lambda self, other: S.expand(self, other.shape),
        "contiguous": lambda self, memory_format=None: wrap(self._r.contiguous()),
        "clone": lambda self, memory_format=None: wrap(self._r.clone()),
        "copy_": S.copy_, "fill_": S.fill_, "zero_": S.zero_,
        "add_": S.in_place(M.add), "sub_": S.in_place(M.sub), "mul_": S.in_place(M.mul),
        "div_": S.in_place(M.div),
        "to": _to, "cpu": lambda self, memory_format=None: wrap(self._r.cpu()),
        "webgpu": lambda self: wrap(self._r.to("webgpu")),
        "cuda": lambda self, device=None, non_blocking=False, memory_format=None: wrap(self._r.to(_cuda(device))),
        "cfloat": lambda self, memory_format=None: self,
        "type_as": lambda self, other: _to(self, other.dtype),
    }
    return m


# torch.<name> -> the complex form, where an argument is a complex tensor
def _torch_forms(m):
    f = {name: _by_method(name, m[name]) if name in _BY_METHOD else m[name] for name in (
        "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "matmul", "mm",
        "bmm", "pow", "eq", "ne", "neg", "negative", "abs", "absolute", "angle", "exp", "conj",
        "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "adjoint", "sum", "mean",
        "reshape", "permute", "transpose", "swapaxes", "swapdims", "t", "unsqueeze", "squeeze",
        "flatten", "unflatten", "narrow", "select", "flip", "roll", "chunk", "split", "unbind",
        "clone")}
    f.update(cat=S.cat, concat=S.cat, concatenate=S.cat, stack=S.stack,
             real=lambda input: Z.real.fget(input), imag=lambda input: Z.imag.fget(input),
             zeros_like=lambda input, **kw: _like(input, 0, kw),
             ones_like=lambda input, **kw: _like(input, 1, kw),
             empty_like=lambda input, **kw: _like(input, 0, kw),
             full_like=lambda input, fill_value, **kw: _like(input, fill_value, kw))
    return f


# torch.<name>(z) as z.<name>(): a conjugate view's own form (its bit kept or resolved)
_BY_METHOD = set(conjugate.VIEW_METHODS) | {"conj", "conj_physical", "resolve_conj", "is_conj"}


def _by_method(name, fn):
    def form(input, *args, **kwargs):
        if isinstance(input, Z):
            return getattr(input, name)(*args, **kwargs)
        return fn(input, *args, **kwargs)
    return form


def _like(input, value, kw):
    dtype = kw.pop("dtype", None)
    device = kw.pop("device", None) or input.device
    if dtype is not None and D.as_dtype(dtype) is not D.complex64:
        return full(input.shape, value, dtype=dtype, device=device, **kw)
    return C.full(input.shape, value, device, kw.get("requires_grad", False))


_SEQUENCE_FIRST = {"cat", "concat", "concatenate", "stack"}


def install(namespace):
    """Give the complex tensor its methods (others refused), and route namespace's torch.*
    functions complex tensors support (namespace: torchweb's globals)."""
    m = _methods()
    for name, fn in m.items():
        setattr(Z, name, fn)
    for table in (method_names(), OPERATORS, INPLACE, METHODS):
        for name in table:
            if name not in Z.__dict__ and name not in _KEEP:
                setattr(Z, name, refusing(name, refusal))
    for name, fn in _torch_forms(m).items():
        orig = namespace.get(name)
        if callable(orig):
            namespace[name] = routed(orig, fn, (Z, conjugate.ConjugateView), name in _SEQUENCE_FIRST)
    Z._edges = S.printed_edges
    Z.real = property(lambda self: wrap_part(self, 0))
    Z.imag = property(lambda self: wrap_part(self, 1))
    Z.T = property(lambda self: S.permute(self, list(range(self.dim() - 1, -1, -1))))
    Z.mT = property(lambda self: S.transpose(self, -2, -1))
    Z.mH = property(lambda self: self.transpose(-2, -1).conj())
    Z.H = property(lambda self: self.t().conj())
    conjugate.install()
    namespace.update(complex=C.complex, polar=C.polar, view_as_complex=C.view_as_complex,
                     view_as_real=C.view_as_real, view_as_real_copy=C.view_as_real_copy,
                     view_as_complex_copy=C.view_as_complex_copy)


def wrap_part(z, i):
    """z.real / z.imag: views of the pair view's parts."""
    return z._r.select(-1, i)


def view_as_real(z):
    return C.view_as_real(z)


__all__ = ["install", "Z", "view_as_real", "wrap"]
