"""torch.autograd.Variable: since PyTorch 0.4 a Tensor is a Variable. Variable(t) gives a
tensor sharing t's storage with the requires_grad asked for, and isinstance(t, Variable) holds
for every tensor."""

from .._is_tensor import is_tensor
from .._creation import tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return is_tensor(other)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False): data (a tensor) as a new leaf sharing its storage."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = tensor([])
        if not is_tensor(data):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


def variable(*args, **kwargs):
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
