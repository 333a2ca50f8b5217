"""nn.Parameter and nn.Buffer: tensors that a Module registers when they are assigned to it."""

from .._tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    Shares the storage of `data` (as PyTorch does) and requires grad by default.
    Ops on a Parameter return plain Tensors."""

    __module__ = "torchweb.nn"

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data) expects a Tensor, got {type(data).__name__}")
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


def is_lazy(module):
    """PyTorch's lazy modules are not supported; nothing here is lazy."""
    return False


class Buffer(Tensor):
    """nn.Buffer: assigning one to a Module attribute registers it as a buffer.
    Module.__setattr__ unwraps it into a plain Tensor sharing its storage."""

    __module__ = "torchweb.nn"

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        b = cls._make(data._storage, data._shape, data._stride, data._offset,
                  data.dtype, data.device)
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass
