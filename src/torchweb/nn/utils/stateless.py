"""functional_call: call a module with some of its parameters and buffers replaced by the given
tensors for that one call (PyTorch's nn/utils/stateless.py; torch.func.functional_call is the
same). Gradients flow to the given tensors, which is what meta-learning (MAML) and per-sample
gradient code use it for."""

import contextlib
import warnings

from ._named_member_accessor import NamedMemberAccessor
from ..parallel import DataParallel

__all__ = ["functional_call"]


def _untie_named_tensors_map(module, parameters_and_buffers):
    """parameters_and_buffers with each tensor also given under the names tied to it (two
    names of one tensor in the module); ValueError when tied names get different tensors."""
    all_named = {}
    all_named.update(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    tied_by_tensor = {}
    for name, tensor in all_named.items():
        tied_by_tensor.setdefault(id(tensor), set()).add(name)
    tied_names_map = {}
    for names in tied_by_tensor.values():
        if len(names) > 1:
            for n in names:
                tied_names_map[n] = names
    given = set(parameters_and_buffers)
    given_tied = {n for n in given if n in tied_names_map}
    for name in given_tied:
        names = tied_names_map[name]
        if len(names & given_tied) > 1 and len({id(parameters_and_buffers[n]) for n in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for tied in tied_names_map[name]:
            untied[tied] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False, stack_weights=False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    accessor = NamedMemberAccessor(module)
    if strict:
        missing_keys, unexpected_keys = accessor.check_keys(untied)
        error_msgs = []
        if unexpected_keys:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if missing_keys:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(error_msgs)))
    orig = {}
    try:
        orig, _ = accessor.swap_tensors_dict(untied, allow_missing=True)
        yield
    finally:
        if stack_weights:
            orig = dict(reversed(orig.items()))
        new, _ = accessor.swap_tensors_dict(orig, allow_missing=True)
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the entries of parameters_and_buffers (dotted names) standing
    in for the module's own for this call. Deprecated by PyTorch for torch.func.functional_call."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
