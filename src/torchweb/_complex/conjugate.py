"""PyTorch's conjugate bit: z.conj() of a complex tensor is a lazy view (is_conj() True) of z's
storage, so it sees z's later writes and writes into z conjugated; resolve_conj() and
conj_physical() give new tensors, conj() of the view is a plain view of z again.

A ConjugateView keeps the pair view of z's storage (_pairs); its _r, which every complex op
reads, is the conjugate computed from it on each read (one elementwise op, with autograd).
View ops keep the bit (as PyTorch's: reshape, indexing, transpose, detach, ...), other ops
give plain results, and in-place ops write conj(value) into the plain view. Real tensors keep
Tensor's forms (conj() is the tensor itself, is_conj() False)."""

from .._complex_tensor import ComplexTensor, wrap
from .._creation import tensor
from ..backends import backend_for

_SIGNS = {}
_WATCHED = set()   # device types whose loss clears _SIGNS

# the complex tensor methods that return views: on a conjugate view, the same view, conjugate
VIEW_METHODS = ("reshape", "view", "permute", "transpose", "swapaxes", "swapdims", "t", "unsqueeze",
                "squeeze", "flatten", "unflatten", "narrow", "select", "expand", "view_as",
                "reshape_as", "expand_as", "__getitem__", "detach", "to", "cpu", "webgpu", "cuda",
                "contiguous", "cfloat", "chunk", "split", "unbind")
IN_PLACE = ("add_", "sub_", "mul_", "div_", "copy_", "fill_", "__setitem__")


def _signs(device):
    s = _SIGNS.get(str(device))
    if s is None:
        if device.type not in _WATCHED:   # (a lost device's tensor goes with it: made anew on next use)
            _WATCHED.add(device.type)
            backend_for(device.type).on_device_lost(lambda _rt: _SIGNS.clear())
        s = _SIGNS[str(device)] = tensor([1.0, -1.0], device=device)
    return s


def conj(z):
    """z.conj(): the conjugate view of a complex tensor's storage."""
    return wrap(z._r, ConjugateView)


def conjugate_of(value):
    """conj(value) of a complex tensor or number (a real one is its own)."""
    if isinstance(value, ComplexTensor):
        return value.conj()
    return value.conjugate() if isinstance(value, complex) else value


class ConjugateView(ComplexTensor):

    @property
    def _r(self):
        return self._pairs * _signs(self._pairs.device)

    @_r.setter
    def _r(self, pairs):
        self._pairs = pairs

    def is_conj(self):
        return True

    def conj(self):
        return wrap(self._pairs)

    def resolve_conj(self):
        return wrap(self._r)

    def conj_physical(self):
        return wrap(self._pairs.clone())

    def zero_(self):
        return self.fill_(0j)   # (conj(0) written: -0.0 imaginary parts, as PyTorch's)

    def numpy(self, force=False):
        raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. "
                           "Use tensor.resolve_conj().numpy() instead.")

    @property
    def real(self):
        return self._pairs.select(-1, 0)

    @property
    def imag(self):
        return -self._pairs.select(-1, 1)

    T = property(lambda self: self.permute(*range(self.dim() - 1, -1, -1)))
    mT = property(lambda self: self.transpose(-2, -1))


def _view(name):
    def method(self, *args, **kwargs):
        out = getattr(wrap(self._pairs), name)(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(conj(z) for z in out)
        return conj(out) if isinstance(out, ComplexTensor) else out
    method.__name__ = name
    return method


def _in_place(name):
    def method(self, *args, **kwargs):
        args = [conjugate_of(a) for a in args]   # (an index is no complex value: it stays)
        getattr(wrap(self._pairs), name)(*args, **kwargs)
        return None if name == "__setitem__" else self
    method.__name__ = name
    return method


def install():
    for name in VIEW_METHODS:
        setattr(ConjugateView, name, _view(name))
    for name in IN_PLACE:
        setattr(ConjugateView, name, _in_place(name))
