"""What torch.func's transforms check of their arguments and results, with PyTorch's messages:
argnums, the tensors at them, has_aux's pair, grad's scalar output, vjp's tensor outputs."""

from .._is_tensor import is_tensor
from ..utils._pytree import tree_flatten

GRAD_API = "grad_and_value(f)(*args)"
VJP_API = "vjp(f, *primals)"


# -- argnums ----------------------------------------------------------------------------------

def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def check_argnums(args, argnums):
    """argnums wrapped to non-negative positions, with PyTorch's errors."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, len(args))
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_wrap_argnum(a, len(args)) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _pick(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace(args, argnums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, v in zip(argnums, new):
            args[i] = v
    return tuple(args)


def _checked_tensor(x):
    if not is_tensor(x):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x


def split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def check_scalar(output):
    if not is_tensor(output):
        raise RuntimeError(f"{GRAD_API}: Expected f(*args) to return a Tensor, got {type(output)}")
    if output.dim() != 0:
        raise RuntimeError(f"{GRAD_API}: Expected f(*args) to return a scalar Tensor, got tensor with "
                           f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")


def flat_outputs(out, api):
    """(the leaves of f's output, its spec), which must be tensors, at least one (PyTorch's
    assert_non_empty_tensor_output)."""
    flat, spec = tree_flatten(out)
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat})")
    for x in flat:
        if not is_tensor(x):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(x)}")
    return flat, spec
