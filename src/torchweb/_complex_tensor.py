"""The complex64 tensor: a float32 tensor of pairs (its `view_as_real`, shape (*shape, 2), last
stride 1) that holds the data and the autograd history, seen as complex.

Every op on a complex tensor is a composition of float32 ops on that pair view, so gradients
come from the real ops' rules: the pair view's gradient (dL/dRe, dL/dIm) seen as complex is
PyTorch's convention for a real loss (z.grad = dL/dRe + i dL/dIm). requires_grad, grad,
grad_fn and backward are the pair view's. The Tensor fields shape/stride/offset are kept in
complex elements for the metadata methods; the storage is not reachable as a Tensor's (an op
torchweb has no complex form of raises, naming complex)."""

import sys

from . import _dtype as D
from ._complex_routes import refusal
from ._tensor import Tensor
from ._printing import tensor_repr


_GENERIC = {"f", "fn", "op", "<lambda>", "wrapper", "inner", "call", "apply", "forward"}


def _op_name():
    """The public op an unsupported call came through: the op name the elementwise entry
    carries (its `name` argument), else the outermost torchweb function with a telling name
    (not a dispatching wrapper's)."""
    f, frames = sys._getframe(2), []
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if mod.startswith("torchweb") and not mod.startswith("torchweb._complex"):
            frames.append(f)
        elif frames:
            break
        f = f.f_back
    for f in reversed(frames):
        name = f.f_locals.get("name") if f.f_code.co_name in ("call", "call_inplace") else None
        if isinstance(name, str):
            return name
    names = [f.f_code.co_name for f in reversed(frames)]
    return next((n for n in names if n not in _GENERIC and not n.startswith("_")), "this operation")


class ComplexTensor(Tensor):

    @property
    def _storage(self):
        # every real op reaches a tensor's storage: the catch-all refusal
        raise refusal(_op_name())

    # -- data --------------------------------------------------------------------------------
    def _flat_values(self):
        v = self._r.contiguous()._flat_values()
        return [complex(v[i], v[i + 1]) for i in range(0, len(v), 2)]

    async def _flat_values_async(self):
        v = await self._r.contiguous()._flat_values_async()
        return [complex(v[i], v[i + 1]) for i in range(0, len(v), 2)]

    def numpy(self, force=False):
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        a = self._r.detach().cpu().numpy()
        return a[..., 0] + 1j * a[..., 1]

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy()
        return a.astype(dtype) if dtype is not None else a

    def __repr__(self):
        return tensor_repr(self)

    def is_complex(self):
        return True

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        raise TypeError("can't convert complex to float")

    def __int__(self):
        raise TypeError("can't convert complex to int")

    def __complex__(self):
        return complex(self.item())

    def __format__(self, spec):
        if self.dim() == 0:
            return format(self.item(), spec)
        return str(self)

    # -- autograd: the pair view's -----------------------------------------------------------
    @property
    def requires_grad(self):
        return self._r.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._r.requires_grad = value

    def requires_grad_(self, requires_grad=True):
        self._r.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._r.grad_fn

    @property
    def is_leaf(self):
        return self._r.is_leaf

    @property
    def grad(self):
        g = self._r.grad
        return None if g is None else wrap(g)

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, ComplexTensor):
            raise RuntimeError("assigned grad has data of a different type")
        self._r.grad = None if value is None else value._r

    def retain_grad(self):
        self._r.retain_grad()

    @property
    def retains_grad(self):
        return self._r.retains_grad

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if gradient is None:
            raise RuntimeError("grad can be implicitly created only for real scalar outputs")
        self._r.backward(gradient._r, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        return self._r.register_hook(lambda g: (lambda h: None if h is None else h._r)(hook(wrap(g))))

    def detach(self):
        return wrap(self._r.detach())

    def detach_(self):
        self._r.detach_()
        return self

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, other):
        self._r.data = other._r
        _set_meta(self, self._r)

    @property
    def _version(self):
        return self._r._version


def _set_meta(z, r):
    z._shape = r._shape[:-1]
    z._stride = tuple(s // 2 for s in r._stride[:-1])
    z._offset = r._offset // 2
    z.device = r.device


def wrap(r, cls=ComplexTensor):
    """The complex tensor whose pair view is r (float32, last dim 2 of stride 1, other strides
    even: pairs never split)."""
    z = object.__new__(cls)
    z._r = r
    _set_meta(z, r)
    z.dtype = D.complex64
    for field, value in _NO_HISTORY:   # (the pair tensor holds the autograd state)
        setattr(z, field, value)
    return z


_NO_HISTORY = (("_base", None), ("_requires_grad", False), ("_grad_fn", None), ("_output_nr", 0))


def pairs(r):
    """r as a valid pair view: contiguous when its pairs are not (last stride 1, others even)."""
    st = r._stride
    if st[-1] != 1 or any(s % 2 for s in st[:-1]) or r._offset % 2:
        r = r.contiguous()
    return r


def is_complex_tensor(x):
    return isinstance(x, ComplexTensor)


_PARAMETER_CLASSES = {}


def parameter(cls, data, requires_grad):
    """nn.Parameter(complex data): a complex tensor that is an instance of cls (Parameter or a
    subclass), whose pair view is a leaf sharing data's storage."""
    if issubclass(cls, ComplexTensor):
        cls = next(c for c in cls.__mro__ if not issubclass(c, ComplexTensor))
    made = _PARAMETER_CLASSES.get(cls)
    if made is None:
        # (named as cls: type(p).__name__ is "Parameter", as PyTorch's)
        made = _PARAMETER_CLASSES[cls] = type(cls.__name__, (cls, ComplexTensor),
                                              {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
    return wrap(data._r.detach(), made).requires_grad_(requires_grad)
