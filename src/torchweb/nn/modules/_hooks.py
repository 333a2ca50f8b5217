"""Module hooks: removable handles, forward pre/post hooks, and full backward hooks (identity
autograd nodes around a module's tensor inputs and outputs, as PyTorch's BackwardHook)."""

import itertools

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd import grad_mode

_next_id = itertools.count()


class RemovableHandle:
    """What register_*_hook returns: .remove() (or leaving a `with` block) takes the hook out."""

    def __init__(self, hooks_dict, extra_dicts=()):
        self.id = next(_next_id)
        self._dicts = (hooks_dict,) + tuple(extra_dicts)

    def remove(self):
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add(hooks, hook, prepend=False, extra=()):
    handle = RemovableHandle(hooks, extra)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def call_with_hooks(module, forward, args, kwargs):
    for hook_id, hook in list(module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    backward = None
    if (module._backward_hooks or module._backward_pre_hooks) and grad_mode.is_grad_enabled():
        backward = _BackwardHook(module)
        args = backward.wrap_inputs(args)
    try:
        result = forward(*args, **kwargs)
    except Exception:
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called:
                try:
                    _call_forward_hook(module, hook_id, hook, args, kwargs, None)
                except Exception:  # noqa: BLE001 (PyTorch reports the forward's error first)
                    pass
        raise
    for hook_id, hook in list(module._forward_hooks.items()):
        hook_result = _call_forward_hook(module, hook_id, hook, args, kwargs, result)
        if hook_result is not None:
            result = hook_result
    if backward is not None:
        result = backward.wrap_outputs(result)
    return result


def _call_forward_hook(module, hook_id, hook, args, kwargs, result):
    if hook_id in module._forward_hooks_with_kwargs:
        return hook(module, args, kwargs, result)
    return hook(module, args, result)


class _Identity(Function):
    """Passes tensors through; its backward hands their gradients to a callback."""
    # (the user's hooks run under grad mode with create_graph; what they return is theirs)
    _double_backward = "unchecked"

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        outs = tuple(t.view(t.shape) for t in tensors)
        return outs if len(outs) > 1 else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        new = ctx.callback(grads)
        return (None,) + tuple(new)


def _checked_grads(result, packed, what):
    """A backward (pre) hook's replacement gradients, which must be one per gradient it saw."""
    if not isinstance(result, tuple) or len(result) != len(packed):
        raise RuntimeError(f"{what}, got {len(result) if isinstance(result, tuple) else 1}, but "
                           f"expected {len(packed)}")
    return result


class _BackwardHook:
    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_index = []

    def _wrap(self, values, callback):
        index = [i for i, v in enumerate(values)
                 if isinstance(v, Tensor) and v.requires_grad]
        if not index:
            return values, index
        wrapped = _Identity.apply(callback, *(values[i] for i in index))
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        values = list(values)
        for i, w in zip(index, wrapped):
            values[i] = w
        return values, index

    def wrap_inputs(self, args):
        self.n_inputs = len(args)
        values, self.input_index = self._wrap(args, self._on_input_grads)
        return tuple(values)

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not isinstance(values, (tuple, list)):
            return result
        self.n_outputs = len(values)
        wrapped, self.output_index = self._wrap(values, self._on_output_grads)
        if single:
            return wrapped[0]
        return tuple(wrapped) if isinstance(result, tuple) else list(wrapped)

    def _pack(self, index, grads, size):
        out = [None] * size
        for i, g in zip(index, grads):
            out[i] = g
        return tuple(out)

    def _on_output_grads(self, grads):
        packed = self._pack(self.output_index, grads, self.n_outputs)
        for hook in list(self.module._backward_pre_hooks.values()):
            result = hook(self.module, packed)
            if result is not None:
                packed = _checked_grads(result, packed, "Backward pre hook returned an invalid number of grad_output")
        self.grad_outputs = packed
        if not self.input_index:  # no input needs a gradient: hooks see grad_input all None
            for hook in list(self.module._backward_hooks.values()):
                hook(self.module, (None,) * self.n_inputs, self.grad_outputs)
        return tuple(packed[i] for i in self.output_index)

    def _on_input_grads(self, grads):
        packed = self._pack(self.input_index, grads, self.n_inputs)
        for hook in list(self.module._backward_hooks.values()):
            result = hook(self.module, packed, self.grad_outputs)
            if result is not None:
                packed = _checked_grads(result, packed, "Backward hook returned an invalid number of grad_input")
        return tuple(packed[i] for i in self.input_index)

