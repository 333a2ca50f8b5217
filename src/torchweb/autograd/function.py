"""torch.autograd.Function and the graph nodes it creates. The library's own ops use it too."""

import re

from .._is_tensor import is_tensor as _is_tensor

from . import grad_mode
from .._size import contiguous_strides, numel
from .._tensor import Tensor
from ..backends import backend_for


class FunctionCtx:
    """The `ctx` of forward/backward: saved tensors (checked against in-place changes),
    needs_input_grad, and whatever the user sets on it."""

    # the defaults are class attributes: a ctx is made for every op recorded with autograd, and
    # most set few of them
    _saved = _saved_versions = _saved_origins = _non_differentiable = _dirty = ()
    _saved_any = _freed = False
    needs_input_grad = ()
    materialize_grads = True

    def save_for_backward(self, *tensors):
        self._saved = tensors
        versions = []
        any_saved = False
        for t in tensors:
            if t is None:
                versions.append(None)
            else:
                versions.append(t._version)
                any_saved = True
        self._saved_versions = tuple(versions)
        self._saved_origins = (None,) * len(tensors)  # (output_nr, node name) of saved outputs
        # a node that saved nothing can run again after its graph is freed (PyTorch's AddBackward0)
        self._saved_any = any_saved

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        if self._freed and self._saved_any:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        for t, v, origin in zip(self._saved, self._saved_versions, self._saved_origins):
            if t is not None and t._version != v:
                # PyTorch names the node that made a saved output, or an input's current node
                if origin is None and t.grad_fn is not None:
                    origin = (t._output_nr, t.grad_fn.name())
                where = (f", which is output {origin[0]} of {re.sub('Backward(0$)?', '', origin[1])},"
                         if origin is not None else "")
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t._type_name()} {list(t.shape)}]{where} is at "
                    f"version {t._version}; expected version {v} instead. Hint: enable anomaly "
                    "detection to find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return self._saved

    saved_variables = saved_tensors

    def _free(self):
        self._saved = (None,) * len(self._saved)
        self._freed = True


class Node:
    """A node of the backward graph: one Function application."""

    __slots__ = ("fn", "ctx", "next_functions", "_pre_hooks", "_hooks", "_retained", "noutputs",
                 "metadata", "__weakref__")

    def __init__(self, fn, ctx, next_functions, noutputs):
        self.fn = fn
        self.ctx = ctx
        self.next_functions = next_functions  # ((node or None, input_nr), ...) per forward input
        self._pre_hooks = {}    # output_nr -> [hook(grad) -> grad or None]
        self._hooks = []
        self._retained = {}     # output_nr -> weakref to the non-leaf tensor that retains grad
        self.noutputs = noutputs
        self.metadata = {}

    def name(self):
        return getattr(self.fn, "_backward_name", None) or f"{self.fn.__name__}Backward"

    def __repr__(self):
        return f"<{self.name()} object>"

    def apply(self, grads):
        ctx = self.ctx
        if ctx.materialize_grads and (grads[0] is None if len(grads) == 1 else any(g is None for g in grads)):
            grads = tuple(g if g is not None or m is None else _zeros(*m)
                          for g, m in zip(grads, self.metadata["outputs"]))
        out = self.fn.backward(ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        return out

    def register_hook(self, fn):
        self._hooks.append(fn)
        return _Handle(self._hooks, fn)

    def register_prehook(self, fn):
        self._pre_hooks.setdefault(0, []).append(fn)
        return _Handle(self._pre_hooks[0], fn)


class AccumulateGrad:
    """The node that ends every path at a leaf: adds the gradient into leaf.grad."""

    __slots__ = ("variable", "next_functions", "_pre_hooks", "_hooks", "_retained", "__weakref__")

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        self._pre_hooks = {}
        self._hooks = []
        self._retained = {}

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return "<AccumulateGrad object>"


class _Handle:
    def __init__(self, container, item):
        self._container, self._item = container, item

    def remove(self):
        if self._item in self._container:
            self._container.remove(self._item)


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = attrs.get("_backward_name") or f"{name}Backward"


class Function(metaclass=FunctionMeta):
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call .apply()."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        # One pass over the inputs (this runs for every op recorded with autograd): which need
        # a gradient, their graph edges (taken before forward: an in-place forward returns an
        # input, whose history then changes) and their metadata.
        state = grad_mode._state
        tracked = False
        if state["enabled"]:
            needs, edges, in_meta = [], [], []
            for a in args:
                if getattr(type(a), "_is_torchweb_tensor", False):
                    in_meta.append((a._shape, a.dtype))
                    if a.requires_grad:
                        needs.append(True)
                        edges.append(_edge(a))
                        tracked = True
                        continue
                else:
                    in_meta.append(None)
                needs.append(False)
                edges.append((None, 0))
        ctx.needs_input_grad = tuple(needs) if tracked else (False,) * len(args)
        # forward runs without recording (no_grad, without its context manager's calls)
        prev, state["enabled"] = state["enabled"], False
        try:
            out = cls.forward(ctx, *args, **kwargs)
        finally:
            state["enabled"] = prev
        if not tracked:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        node = Node(cls, ctx, tuple(edges), len(outs))
        if ctx._saved:
            _alias_saved_outputs(ctx, outs, node)
        nondiff = ctx._non_differentiable
        out_meta = []
        for i, o in enumerate(outs):
            if getattr(type(o), "_is_torchweb_tensor", False):
                if o.dtype.is_floating_point and not (nondiff and any(o is t for t in nondiff)):
                    o._set_history(node, i)
                out_meta.append((o._shape, o.dtype, o.device))
            else:
                out_meta.append(None)
        node.metadata["inputs"] = tuple(in_meta)
        node.metadata["outputs"] = tuple(out_meta)
        return out


def _alias_saved_outputs(ctx, outs, node):
    """Saved outputs are kept as detached aliases (same storage and version counter): an
    output holding its own node through ctx would be a reference cycle, keeping device
    memory alive until Python's cycle collector runs."""
    out_ids = [id(o) for o in outs]   # (identity: `in outs` would compare tensors by value)
    for s in ctx._saved:
        if s is not None and id(s) in out_ids:
            break
    else:
        return   # (most nodes save no output)
    saved, origins = list(ctx._saved), list(ctx._saved_origins)
    for j, s in enumerate(saved):
        for i, o in enumerate(outs):
            if s is not None and s is o:
                saved[j], origins[j] = o.detach(), (i, node.name())
    ctx._saved, ctx._saved_origins = tuple(saved), tuple(origins)


def _edge(t):
    if not t.requires_grad:
        return (None, 0)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (t._accumulator(), 0)


def once_differentiable(fn):
    return fn


def _zeros(shape, dtype, device):
    """A gradient of zeros for an output that got none (materialize_grads): a storage of the
    device's and a fill (zero_, installed on Tensor by the ops above)."""
    storage = backend_for(device.type).empty_storage(numel(shape), dtype)
    return Tensor._make(storage, shape, contiguous_strides(shape), 0, dtype, device).zero_()
