"""float64 on the host: programs that compute small things in float64 and cast (a diffusion
model's noise schedule, data preparation) run, with no numpy needed.

A float64 tensor (tensor.py) holds Python's array('d') on the host and reports the cpu device.
It supports creation (tensor, zeros/ones/full/empty/arange/linspace, the _like forms), the
elementwise math of Python's floats (elementwise.py), cumsum/cumprod and sum/mean/prod/max/min/
var/std/argmax (reduce.py), indexing, reshapes, transposes, cat/stack and constant padding
(shape.py), casts
(convert.py: .float() and .to(device) give float32 on the GPU), printing, .tolist()/.item().
Anything heavier (matmul, convolution, autograd, ...) is refused with a RuntimeError naming
float64 and saying to cast with .float().

install() gives the float64 tensor its methods and routes the torch.* functions it supports
here when an argument is a float64 tensor (the registry's op otherwise, unchanged)."""

import functools

from .. import _dtype as D, _functions, _tensor_methods as TM
from .._float64 import ROUTES, refusal
from .._is_tensor import is_tensor
from .._type_routes import refusing, routed
from .._tensor_methods import _cuda as target
from ..nn import functional as F
from ..ops.registry import method_names
from . import convert, creation, elementwise as E, reduce as R, shape as S
from .elementwise import broadcast_shapes, expand
from .tensor import HostFloat64Tensor as H, is_host64, values_of

H.to = convert.to
H._edges = S.printed_edges

# the creation functions and casts that meet a float64 request send it here
ROUTES.update(tensor=creation.tensor, full=creation.full, from_list=creation.from_list,
              linspace=creation.linspace, to=convert.to_float64)

# methods that work on a float64 tensor as Tensor defines them (metadata, new_* creation)
_KEEP = {"new_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "type", "__hash__",
         "dim", "size", "numel", "element_size", "is_floating_point", "is_complex", "stride",
         "storage_offset", "__len__", "__bool__", "__float__", "__int__", "__format__", "item",
         "tolist", "__iter__", "ndimension", "nelement", "__repr__", "__str__"}


def _binary_method(name, reflected=False):
    def op(self, other, *, alpha=None, rounding_mode=None, out=None):
        if not (is_tensor(other) or isinstance(other, (int, float, bool))):
            return NotImplemented
        if is_tensor(other) and not is_host64(other) and other.dim() and not self.dim():
            # a 0-d float64 tensor with a dimensioned tensor: PyTorch keeps the latter's dtype
            a, b = (other, self.item()) if reflected else (self.item(), other)
            kw = {k: v for k, v in (("alpha", alpha), ("rounding_mode", rounding_mode)) if v is not None}
            return getattr(_functions, name)(a, b, **kw)
        a, b = (other, self) if reflected else (self, other)
        return E.binary(name, a, b, alpha=alpha, rounding_mode=rounding_mode)
    return op


def _compare_method(name):
    def op(self, other):
        if not (is_tensor(other) or isinstance(other, (int, float, bool))):
            return NotImplemented
        return E.compare(name, self, other)
    return op


def _inplace(fn):
    def op(self, *args, **kwargs):
        return E.write(self, fn(self, *args, **kwargs))
    return op


def _methods():
    m = {}
    for name in E.UNARY:
        m[name] = functools.partialmethod(lambda self, n: E.unary(n, self), name)
        m[name + "_"] = _inplace(lambda self, n=name: E.unary(n, self))
    for name in E.BINARY:
        m[name] = _binary_method(name)
        m[name + "_"] = _inplace(_binary_method(name))
    for name in E.COMPARE:
        m[name] = _compare_method(name)
    for name in E.PREDICATES:
        m[name] = functools.partialmethod(lambda self, n: E.predicate(n, self), name)
    for dunder, name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                         ("pow", "pow"), ("floordiv", "floor_divide"), ("mod", "remainder")):
        m[f"__{dunder}__"] = _binary_method(name)
        m[f"__r{dunder}__"] = _binary_method(name, reflected=True)
        m[f"__i{dunder}__"] = _inplace(_binary_method(name))
    for dunder in ("eq", "ne", "lt", "le", "gt", "ge"):
        m[f"__{dunder}__"] = _compare_method(dunder)
    m.update(__neg__=lambda self: E.unary("neg", self), __pos__=lambda self: self,
             __abs__=lambda self: E.unary("abs", self),
             clamp=E.clamp, clip=E.clamp, clamp_=_inplace(E.clamp), clip_=_inplace(E.clamp),
             clamp_min=lambda self, min: E.clamp(self, min=min),
             clamp_max=lambda self, max: E.clamp(self, max=max),
             lerp=E.lerp, lerp_=_inplace(E.lerp),
             where=lambda self, condition, other: E.where(condition, self, other),
             sum=R.sum, mean=R.mean, prod=R.prod, max=R.max, min=R.min, amax=R.amax, amin=R.amin,
             var=R.var, std=R.std, argmax=R.argmax, argmin=R.argmin,
             cumsum=R.cumsum, cumprod=R.cumprod, cumsum_=_inplace(R.cumsum), cumprod_=_inplace(R.cumprod),
             permute=S.permute, transpose=S.transpose, swapaxes=S.transpose, t=S.t,
             reshape=S.reshape, view=S.reshape, flatten=S.flatten, unsqueeze=S.unsqueeze,
             squeeze=S.squeeze, __getitem__=S.getitem, __setitem__=S.setitem,
             fill_=lambda self, value: _fill(self, value), zero_=lambda self: _fill(self, 0.0),
             copy_=lambda self, src, non_blocking=False: _copy(self, src),
             float=lambda self, memory_format=None: self.to(_dt("float32")),
             half=lambda self, memory_format=None: self.to(_dt("float16")),
             long=lambda self, memory_format=None: self.to(_dt("int64")),
             int=lambda self, memory_format=None: self.to(_dt("int32")),
             bool=lambda self, memory_format=None: self.to(_dt("bool")),
             byte=lambda self, memory_format=None: self.to(_dt("uint8")),
             cuda=lambda self, device=None, non_blocking=False, memory_format=None: self.to(_cuda(device)),
             webgpu=lambda self: self.to("webgpu"),
             view_as=lambda self, other: S.reshape(self, tuple(other.shape)),
             reshape_as=lambda self, other: S.reshape(self, tuple(other.shape)))
    return m


def _dt(name):
    return getattr(D, name)


def _cuda(device):
    return target(device)


def _fill(x, value):
    x._data[:] = E.array("d", [float(value)]) * len(x._data)
    return x


def _copy(x, src):
    vals, shape = values_of(src, "copy_", any_device=True)
    broadcast_shapes(shape, x._shape, what="copy_")
    x._data[:] = E.array("d", expand(vals, shape, x._shape))
    return x


# torch.<name> -> the float64 form, where an argument is a float64 tensor
def _torch_forms():
    f = {name: (lambda n: lambda input, *, out=None: E.unary(n, input))(name) for name in E.UNARY}
    f.update({name: (lambda n: lambda input, other, *, alpha=None, rounding_mode=None, out=None:
                     E.binary(n, input, other, alpha=alpha, rounding_mode=rounding_mode))(name)
              for name in E.BINARY})
    f.update({name: (lambda n: lambda input, other, *, out=None: E.compare(n, input, other))(name)
              for name in E.COMPARE})
    f.update({name: (lambda n: lambda input: E.predicate(n, input))(name) for name in E.PREDICATES})
    f.update(clamp=E.clamp, clip=E.clamp, lerp=E.lerp, where=E.where,
             sum=R.sum, mean=R.mean, prod=R.prod, max=R.max, min=R.min, amax=R.amax, amin=R.amin,
             var=R.var, std=R.std, argmax=R.argmax, argmin=R.argmin, permute=S.permute,
             transpose=S.transpose, t=S.t,
             cumsum=R.cumsum, cumprod=R.cumprod, reshape=S.reshape, flatten=S.flatten,
             unsqueeze=S.unsqueeze, squeeze=S.squeeze, cat=S.cat, concat=S.cat,
             concatenate=S.cat, stack=S.stack)
    return f


_SEQUENCE_FIRST = {"cat", "concat", "concatenate", "stack"}


def _dispatching(orig, host, sequence_first):
    return routed(orig, host, H, sequence_first)


def install(namespace):
    """Give the float64 tensor its methods (others refused), and route namespace's torch.*
    functions that float64 supports (namespace: torchweb's globals)."""
    for name, fn in _methods().items():
        setattr(H, name, fn)
    for table in (method_names(), TM.OPERATORS, TM.INPLACE, TM.METHODS):
        for name in table:
            if name not in H.__dict__ and name not in _KEEP:
                setattr(H, name, _refusing(name))
    for name, host in _torch_forms().items():
        orig = namespace.get(name)
        if callable(orig):
            namespace[name] = _dispatching(orig, host, name in _SEQUENCE_FIRST)
    F.pad = _dispatching(F.pad, S.pad, False)
    # properties: the transposes
    H.T = property(lambda self: S.permute(self, list(range(self.dim() - 1, -1, -1))))
    H.mT = property(lambda self: S.transpose(self, -2, -1))


def _refusing(name):
    return refusing(name, refusal)


__all__ = ["install", "H", "convert"]
