"""PyTorch's `out=` for ops whose own function has none: the registry wraps the torch.* form of
an op defined with `out=True` (define(..., out=True)), so the op's code stays functional and the
rule lives here once: the result's dtype must cast to out's (PyTorch's can_cast), out is
resized when its shape differs (with PyTorch's warning when it held elements), then filled in
place; tuple results fill a tuple of outs. out= with inputs that require grad is refused, as
PyTorch refuses it."""

import functools
import inspect
import warnings

from .._is_tensor import is_tensor
from ..autograd import grad_mode


def write_out(result, out, name):
    """result written into out (a tensor, or a tuple of them for a tuple result); returns out."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors")
        for r, o in zip(result, out):
            write_out(r, o, name)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if not is_tensor(out):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if result.dtype.category > out.dtype.category:   # PyTorch's canCast: no float -> int, no int -> bool
        raise RuntimeError(f"result type {result.dtype.word} can't be cast to the desired "
                           f"output type {out.dtype.word}")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got "
                           f"{out.device} instead")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=3)
        out.data = result.to(out.dtype)     # (a new storage of the result's shape, as resize_ gives)
        out._bump_version()
        return out
    out.copy_(result)
    return out


def result_or_out(result, out, name):
    """What an op that spells out= in its own signature returns: result when out is None, else
    result written into out by write_out's rules."""
    return result if out is None else write_out(result, out, name)


def with_out(fn, name):
    """fn with PyTorch's `out=` keyword (for the torch.* form)."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else write_out(result, out, name)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    op.__signature__ = sig.replace(parameters=params)
    return op
