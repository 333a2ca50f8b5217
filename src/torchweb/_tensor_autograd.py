"""Tensor methods of autograd's bookkeeping that reach above the Tensor class (the graph's
nodes, the engine, ops for a view's refreshed history): installed on Tensor by
_tensor_methods.install, so that _tensor.py imports nothing above the backends."""

import copy
import weakref

from ._tensor import Tensor
from .autograd import backward as _backward, grad_mode
from .autograd.function import AccumulateGrad, _Handle
from .ops.shape import as_strided


def _refresh_view_history(self):
    """The storage was written in place since this view's history was recorded (through
    the base or another view): the view's values now come from the base's new history,
    so, as PyTorch does, its grad_fn becomes an as_strided view of the base."""
    self._view_version = self._storage.version
    base = self._base
    if not base.requires_grad:
        return
    with grad_mode.enable_grad():
        v = as_strided(base, self._shape, self._stride, self._offset)
    self._set_history(v._grad_fn, 0)


def _accumulator(self):
    acc = self._acc() if self._acc is not None else None
    if acc is None:
        acc = AccumulateGrad(self)
        self._acc = weakref.ref(acc)
    return acc


def register_hook(self, hook):
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        if type(self._hooks) is tuple:
            self._hooks = []
        self._hooks.append(hook)
        return _Handle(self._hooks, hook)
    hooks = self.grad_fn._pre_hooks_of(self._output_nr)
    hooks.append(hook)
    return _Handle(hooks, hook)


def register_post_accumulate_grad_hook(self, hook):
    """hook(tensor) runs after backward has accumulated this leaf's .grad."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if self._post_accumulate_grad_hooks is None:
        self._post_accumulate_grad_hooks = []
    self._post_accumulate_grad_hooks.append(hook)
    return _Handle(self._post_accumulate_grad_hooks, hook)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def __deepcopy__(self, memo):
    if self.grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment.")
    if id(self) in memo:
        return memo[id(self)]
    with grad_mode.no_grad():
        new = self.clone()
    new.requires_grad_(self.requires_grad)
    if self._grad is not None:
        new._grad = copy.deepcopy(self._grad, memo)
    memo[id(self)] = new
    return new


METHODS = {
    "_refresh_view_history": _refresh_view_history, "_accumulator": _accumulator,
    "register_hook": register_hook, "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
    "backward": backward, "__deepcopy__": __deepcopy__,
}
