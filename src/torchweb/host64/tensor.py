"""The float64 tensor: a flat array('d') on the host, always contiguous, reported on the cpu device.

Its methods are the restricted set host64/ implements (creation, elementwise math, scans,
reductions, indexing, cat/stack, casts, printing); every other op of Tensor is refused with a
message that names float64 and says to cast with .float(). Indexing copies (a float64 tensor
never shares its array with another): writes go through `x[...] = v` and in-place methods."""

from array import array

from .. import _dtype as D
from .._device import CPU
from .._size import Size, contiguous_strides
from .._float64 import refusal
from .._tensor import Tensor
from .._numpy import np
from .._printing import tensor_repr


class HostFloat64Tensor(Tensor):
    # (to() and _edges(), which need convert.py and shape.py, are installed by the package)
    __slots__ = ("_data",)

    @property
    def _storage(self):
        # every op of the GPU and cpu backends reaches a tensor's storage: the catch-all refusal
        raise refusal("this operation")

    # -- metadata ----------------------------------------------------------------------------
    def is_contiguous(self, memory_format=None):
        return True

    @property
    def requires_grad(self):
        return False

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            raise refusal("autograd")
        return self

    @property
    def grad_fn(self):
        return None

    @property
    def grad(self):
        return None

    # -- values ------------------------------------------------------------------------------
    def _flat_values(self):
        return list(self._data)

    async def _flat_values_async(self):
        return list(self._data)

    def detach(self):
        return make(self._data, self._shape)

    def clone(self, *, memory_format=None):
        return make(array("d", self._data), self._shape)

    def contiguous(self, memory_format=None):
        return self

    def numpy(self, force=False):
        return np().array(self._data, dtype="float64").reshape(tuple(self._shape))

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __deepcopy__(self, memo):
        return self.clone()

    def __reduce_ex__(self, proto):
        return (_rebuild, (list(self._data), tuple(self._shape)))

    def __repr__(self):
        return tensor_repr(self)

    # -- conversions -------------------------------------------------------------------------
    def double(self, memory_format=None):
        return self

    def cpu(self, memory_format=None):
        return self


def make(data, shape):
    """A float64 tensor over `data` (an array('d'), not copied) with `shape`."""
    t = object.__new__(HostFloat64Tensor)
    shape = shape if type(shape) is Size else Size(shape)
    t._data = data
    t._shape = shape
    t._stride = contiguous_strides(tuple(shape))
    t._offset = 0
    t.dtype = D.float64
    t.device = CPU
    t._base = None
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    return t


def from_values(values, shape):
    return make(array("d", values), shape)


def _rebuild(values, shape):
    return from_values(values, shape)


def values_of(x, what, any_device=False):
    """(flat float values, shape) of a float64 tensor, a Python number, or another tensor, read
    back (float64 work is small): a 0-d one or one on the cpu device, as PyTorch combines a
    cpu float64 tensor with those only; any tensor with any_device (indices)."""
    if type(x) is HostFloat64Tensor:
        return x._data, x._shape
    if getattr(type(x), "_is_torchweb_tensor", False):
        if x.dim() and x.device.type != "cpu" and not any_device:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found a float64 tensor (held "
                f"on the host: cpu) and a {x.dtype} tensor on {x.device} (in {what}). Cast the "
                "float64 one with .float() (or .to(device)) to compute on the GPU")
        return [float(v) for v in x.detach()._flat_values()], x.shape
    if isinstance(x, (int, float, bool)):
        return [float(x)], Size(())
    raise TypeError(f"{what}: expected a tensor or a number, got {type(x).__name__}")


def is_host64(x):
    return type(x) is HostFloat64Tensor


__all__ = ["HostFloat64Tensor", "make", "from_values", "values_of", "refusal", "is_host64"]
