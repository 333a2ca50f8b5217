"""nn.Parameter and nn.Buffer: tensors that a Module registers when they are assigned to it;
UninitializedParameter and UninitializedBuffer, the shapeless placeholders of lazy modules."""

from .._tensor import Tensor
from .. import _dtype as D
from .._creation import empty
from .._complex_tensor import parameter as complex_parameter


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    Shares the storage of `data` (as PyTorch does) and requires grad by default.
    Ops on a Parameter return plain Tensors."""

    __module__ = "torchweb.nn"

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data) expects a Tensor, got {type(data).__name__}")
        if data.dtype.is_complex:   # (float32 pairs: a complex tensor class, torchweb/_complex/)
            return complex_parameter(cls, data, requires_grad)
        p = cls._make(data._storage, data._shape, data._stride, data._offset,
                  data.dtype, data.device)
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # all done in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


def is_lazy(param):
    """Whether param is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


_USE_ERROR = ("Attempted to use an uninitialized parameter in {}. This error happens when you are using a "
              "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. "
              "When using LazyModules Call `forward` with a dummy batch to initialize the parameters before "
              "calling torch functions")

# what an uninitialized tensor still answers (PyTorch's _allowed_methods, and the attributes a
# Module reads while it registers, moves and saves it)
_ALLOWED = frozenset({"materialize", "cls_to_become", "dtype", "device", "data", "requires_grad",
                      "requires_grad_", "grad", "is_leaf", "grad_fn", "size", "copy_", "is_complex",
                      "is_floating_point", "half", "float", "double", "bfloat16", "to", "cpu", "cuda",
                      "get_device", "shape", "persistent", "is_cuda", "is_sparse", "layout"})


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet: materialize(shape) gives it storage and turns it
    into cls_to_become. Until then its data is empty and using it in an op raises."""

    __slots__ = ()
    cls_to_become = None

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith("_") or name in _ALLOWED or not callable(attr):
            return attr

        def refuse(*args, **kwargs):
            raise ValueError(_USE_ERROR.format(f"<method '{name}' of 'Tensor' objects>"))
        return refuse

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into "
                           "an initialized one. Call `forward` to initialize the parameters before accessing "
                           "their attributes.")

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor storage of `shape` (uninitialized values) and makes it a
        cls_to_become (Parameter or Tensor)."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def to(self, *args, **kwargs):
        """Another uninitialized tensor with the device and dtype asked for."""
        plain = Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype, self.device)
        moved = plain.to(*args, **kwargs)
        return type(self)(self.requires_grad, moved.device, moved.dtype)

    def cpu(self):
        return self.to("cpu")

    def half(self):
        return self.to(D.float16)

    def float(self):
        return self.to(D.float32)

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def _refuse_operator(name):
    def op(self, *args, **kwargs):
        raise ValueError(_USE_ERROR.format(f"<method '{name}' of 'Tensor' objects>"))
    op.__name__ = name
    return op


# operators are looked up on the type, past __getattribute__: each refuses as the methods do
for _name in ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
              "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__",
              "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__",
              "__abs__", "__invert__", "__and__", "__or__", "__xor__", "__lt__", "__le__", "__gt__", "__ge__",
              "__getitem__", "__setitem__", "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__"):
    setattr(UninitializedTensorMixin, _name, _refuse_operator(_name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module infers from its first input."""

    __module__ = "torchweb.nn"
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers from its first input."""

    __module__ = "torchweb.nn"
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = empty(0, device=device, dtype=dtype)
        b = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype, data.device)
        b.requires_grad_(requires_grad)
        b.persistent = persistent
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


class Buffer(Tensor):
    """nn.Buffer: assigning one to a Module attribute registers it as a buffer.
    Module.__setattr__ unwraps it into a plain Tensor sharing its storage."""

    __module__ = "torchweb.nn"

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        b = cls._make(data._storage, data._shape, data._stride, data._offset,
                  data.dtype, data.device)
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass
