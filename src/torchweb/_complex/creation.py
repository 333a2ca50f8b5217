"""Making complex tensors: torch.complex, torch.polar, view_as_complex / view_as_real (views,
no copy), and the routes the creation functions take for complex data or dtype=complex64."""

import builtins
import math

from .. import _dtype as D
from .._creation import tensor as _tensor, zeros as _zeros, randn as _randn, rand as _rand
from .._is_tensor import is_tensor
from .._size import broadcast_shapes
from ..ops.join import stack
from .._complex_tensor import ComplexTensor, wrap


def _check_parts(name, a, b):
    for x in (a, b):
        if not is_tensor(x):
            raise TypeError(f"{name}(): argument must be Tensor, not {type(x).__name__}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.word} but got scalar type "
                           f"{b.dtype.word} for second argument")
    if a.dtype is D.float64:
        raise TypeError(f"{name}(): float64 parts would make complex128, which torchweb does not "
                        "have; cast them with .float()")
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype.word} and {b.dtype.word}")


def _pair(a, b):
    if a.shape != b.shape:
        shape = broadcast_shapes(a.shape, b.shape)
        a, b = a.expand(shape), b.expand(shape)
    return wrap(stack([a.float(), b.float()], -1))


def complex(real, imag, *, out=None):
    """torch.complex(real, imag): real + i imag, of float parts of one dtype."""
    _check_parts("complex", real, imag)
    return _pair(real, imag)


def polar(abs, angle, *, out=None):
    """torch.polar(abs, angle): abs * (cos angle + i sin angle)."""
    _check_parts("polar", abs, angle)
    return _pair(abs * angle.cos(), abs * angle.sin())


def view_as_complex(input):
    """The complex view of a float32 tensor whose last dim is 2 of stride 1 (no copy)."""
    if isinstance(input, ComplexTensor) or input.dtype is not D.float32:
        what = "complex64" if isinstance(input, ComplexTensor) else input.dtype.name
        if input.dtype in (D.float16, D.float64):
            raise RuntimeError(f"view_as_complex is only supported for float32 in torchweb, got {what}")
        raise RuntimeError(f"view_as_complex is only supported for floating point tensors, but got a tensor of scalar type: {input.dtype.word}")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return wrap(input.view(input.shape))   # (an alias: the view's own history, as PyTorch's)


def view_as_real(input):
    """The float32 view of a complex tensor, with a trailing dim of 2 (no copy)."""
    if not isinstance(input, ComplexTensor):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input.is_conj():
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that "
                           "the resulting tensor will NOT alias the original.")
    return input._r.view(input._r.shape)


def view_as_real_copy(input, *, out=None):
    """view_as_real(input), copied."""
    return view_as_real(input.resolve_conj()).clone()


def view_as_complex_copy(input, *, out=None):
    """view_as_complex(input), copied."""
    return view_as_complex(input).clone()


def from_data(data, device, requires_grad):
    """torch.tensor of data holding complex numbers (nested sequences, or a numpy array)."""
    if hasattr(data, "tolist") and not isinstance(data, (list, tuple)):
        data = data.tolist()
    r = _tensor(_split(data), dtype=D.float32, device=device)
    if r.dim() == 0 or r.shape[-1] != 2:
        r = r.reshape(*r.shape, 2) if r.numel() else r.reshape(0, 2)
    return wrap(r).requires_grad_(requires_grad)


def _split(v):
    if isinstance(v, (list, tuple)):
        return [_split(x) for x in v]
    if is_tensor(v):
        v = v.item()
    v = builtins.complex(v)
    return [v.real, v.imag]


def from_real(x, device):
    """A real tensor as complex64 (Tensor.to(torch.complex64), .cfloat()): zero imaginary parts."""
    if x.dtype is D.float64:
        raise TypeError("a float64 tensor would become complex128, which torchweb does not have; "
                        "cast with .float() first")
    x = x.to(device)
    return _pair(x.float(), _zeros(x.shape, device=x.device))


def full(shape, value, device, requires_grad):
    """zeros/ones/full/empty with dtype=complex64."""
    v = 0j if value is None else builtins.complex(value)
    r = _zeros(*shape, 2, device=device)
    if v:
        r[..., 0] = v.real
        r[..., 1] = v.imag
    return wrap(r).requires_grad_(requires_grad)


def random(shape, kind, device, requires_grad, generator):
    """randn (real and imaginary parts each of variance 1/2, as PyTorch's) and rand."""
    if kind == "normal":
        r = _randn(*shape, 2, device=device, generator=generator) * math.sqrt(0.5)
    else:
        r = _rand(*shape, 2, device=device, generator=generator)
    return wrap(r).requires_grad_(requires_grad)
