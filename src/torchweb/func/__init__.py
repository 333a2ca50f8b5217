"""torch.func: composable function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
vmap, functional_call, stack_module_state) and einops' rearrange. docs/func.md says how they
run here."""

from ._autodiff import grad, grad_and_value, vjp, jvp, linearize
from ._jacobian import jacrev, jacfwd, hessian
from ._vmap import vmap
from ._modules import functional_call, stack_module_state, replace_all_batch_norm_modules_
from ._rearrange import rearrange
from .._refused import module_getattr as _module_getattr

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize",
           "debug_unwrap", "rearrange"]


def functionalize(func, *, remove="mutations"):
    """func itself: torchweb runs eagerly, so there is no traced program whose mutations
    and views functionalize would rewrite, and the results are the same."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")
    return func


def debug_unwrap(tensor, *, recurse=True):
    """The tensor itself: torchweb's transforms hand functions plain tensors, never wrappers."""
    return tensor


__getattr__ = _module_getattr("func", "torchweb.func")
