"""torch.autograd.Function and the graph nodes it creates. The library's own ops use it too."""

import re
import weakref
from itertools import count

from . import grad_mode
from .._size import contiguous_strides, numel
from .._tensor import Tensor
from ..backends import backend_for


# every node's creation number, negated (Node._seq): the engine runs the nodes of a backward pass
# latest made first, the smallest _seq first (a bound method: one call, no look-up of next)
_next_seq = count(0, -1).__next__


class FunctionCtx:
    """The `ctx` of forward/backward: saved tensors (checked against in-place changes),
    needs_input_grad, and whatever the user sets on it."""

    # the defaults are class attributes: a ctx is made for every op recorded with autograd, and
    # most set few of them
    # _saved_origins: per saved tensor, (output_nr, node name) of a saved output, else None;
    # () where no output is saved (_alias_saved_outputs sets it)
    _saved = _saved_versions = _saved_origins = _non_differentiable = _dirty = ()
    _saved_any = _freed = False
    needs_input_grad = ()
    materialize_grads = True

    def save_for_backward(self, *tensors):
        self._saved = tensors
        # (a list comprehension, not a loop of appends: this runs for every op recorded;
        # the storage's version, Tensor._version without its property's call)
        try:
            versions = tuple([None if t is None else t._storage.version for t in tensors])
        except (AttributeError, NotImplementedError):   # a sparse tensor: no dense storage
            versions = tuple([None if t is None else t._version for t in tensors])
        self._saved_versions = versions
        # a node that saved nothing can run again after its graph is freed (PyTorch's AddBackward0)
        self._saved_any = versions.count(None) < len(versions)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        if not self._saved_any:   # (Nones only: nothing to check)
            return self._saved
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        saved = self._saved
        # (one comparison of the versions in C; the loop below only names the culprit)
        try:
            if tuple([None if t is None else t._storage.version for t in saved]) == self._saved_versions:
                return saved
        except (AttributeError, NotImplementedError):   # a sparse tensor: the loop below reads _version
            pass
        for j, (t, v) in enumerate(zip(saved, self._saved_versions)):
            if t is not None and t._version != v:
                # PyTorch names the node that made a saved output, or an input's current node
                origin = self._saved_origins[j] if self._saved_origins else None
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
        if self._saved_any:   # (else Nones already)
            self._saved = (None,) * len(self._saved)
        self._freed = True


class Node:
    """A node of the backward graph: one Function application. Its hooks and retained
    tensors are made on first use (most nodes never get any): _pre_hooks, output_nr ->
    [hook(grad) -> grad or None], and _retained, output_nr -> weakref to the non-leaf tensor
    that retains grad, are None until then, _hooks an empty tuple. _inputs and _outputs: per
    forward input (shape, dtype), per output (shape, dtype, device), None for a non-tensor:
    what the engine checks gradients against and materializes missing ones from (_outputs
    only for a node of several outputs: the engine skips a one-output node that gets no
    gradient). _seq: the node's creation number negated, the engine's order."""

    # (slots for what every node sets; the rarely set hooks, retained tensors, metadata, and
    # the outputs' count and metadata (a node of several outputs: Function.apply sets them)
    # default to these class attributes until set, in the instance's __dict__)
    __slots__ = ("fn", "ctx", "next_functions", "_inputs", "_seq", "__dict__", "__weakref__")
    _pre_hooks = _retained = _metadata = None
    _hooks = _outputs = ()
    noutputs = 1   # (a node of several outputs: Function.apply sets its count)

    def __init__(self, fn, ctx, next_functions, inputs):
        self.fn = fn
        self.ctx = ctx
        self.next_functions = next_functions  # ((node or None, input_nr), ...) per forward input
        self._inputs = inputs
        self._seq = _next_seq()   # (the engine's order: see run_backward)

    @property
    def metadata(self):
        """The user's dict (PyTorch's Node.metadata), made on first use."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _pre_hooks_of(self, output_nr):
        """The list of pre-hooks of output output_nr, made if it has none."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return self._pre_hooks.setdefault(output_nr, [])

    def _retain(self, output_nr, tensor):
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)

    def name(self):
        return getattr(self.fn, "_backward_name", None) or f"{self.fn.__name__}Backward"

    def __repr__(self):
        return f"<{self.name()} object>"

    def apply(self, grads):
        ctx = self.ctx
        if ctx.materialize_grads and (grads[0] is None if len(grads) == 1 else any(g is None for g in grads)):
            grads = tuple(g if g is not None or m is None else _zeros(*m)
                          for g, m in zip(grads, self._outputs))
        out = self.fn.backward(ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        return out

    def register_hook(self, fn):
        if type(self._hooks) is tuple:
            self._hooks = []
        self._hooks.append(fn)
        return _Handle(self._hooks, fn)

    def register_prehook(self, fn):
        hooks = self._pre_hooks_of(0)
        hooks.append(fn)
        return _Handle(hooks, fn)


class AccumulateGrad:
    """The node that ends every path at a leaf: adds the gradient into leaf.grad."""

    __slots__ = ("variable", "_seq", "__weakref__")

    # (no hooks or retained tensors: as a Node's before any is registered)
    next_functions = _hooks = ()
    _pre_hooks = _retained = None

    def __init__(self, variable):
        self.variable = variable
        self._seq = _next_seq()

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
        # the library's own (its backward makes fresh gradients: the engine may hand them on)
        cls._library = cls.__module__.startswith("torchweb.")


class Function(metaclass=FunctionMeta):
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call .apply()."""

    # the library's Functions whose forward runs raw kernels only (nothing in it records
    # autograd) set this: apply then leaves grad mode as it is around forward
    _forward_is_raw = False

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
        # input, whose history then changes) and their metadata (shape, dtype; None for
        # what is not a tensor).
        state = grad_mode._state
        tracked = False
        if state["enabled"]:
            # (filled in for the tensors only: the numbers among the arguments cost no stores)
            n = len(args)
            needs, edges, in_meta = [False] * n, [_NO_EDGE] * n, [None] * n
            for i, a in enumerate(args):
                if isinstance(a, Tensor):
                    in_meta[i] = (a._shape, a.dtype)
                    # (the property for a view: its history refreshed first)
                    if a._requires_grad if a._base is None else a.requires_grad:
                        fn = a._grad_fn
                        edges[i] = (fn, a._output_nr) if fn is not None else (a._accumulator(), 0)
                        needs[i] = tracked = True
        ctx.needs_input_grad = tuple(needs) if tracked else (False,) * len(args)
        if cls._forward_is_raw:
            out = cls.forward(ctx, *args, **kwargs)
        else:
            # forward runs without recording (no_grad, without its context manager's calls)
            prev, state["enabled"] = state["enabled"], False
            try:
                out = cls.forward(ctx, *args, **kwargs)
            finally:
                state["enabled"] = prev
        if not tracked:
            return out
        nondiff = ctx._non_differentiable
        if not isinstance(out, tuple):
            # (one output: no output metadata, as the engine skips a one-output node that gets
            # no gradient, so never materializes one for it)
            node = Node(cls, ctx, tuple(edges), tuple(in_meta))
            if ctx._saved:
                _alias_saved_outputs(ctx, (out,), node)
            if isinstance(out, Tensor) and out.dtype.is_floating_point and not (nondiff and _among(out, nondiff)):
                out._set_history(node, 0)
            return out
        node = Node(cls, ctx, tuple(edges), tuple(in_meta))
        node.noutputs = len(out)
        if ctx._saved:
            _alias_saved_outputs(ctx, out, node)
        out_meta = []
        for i, o in enumerate(out):
            if isinstance(o, Tensor):
                if o.dtype.is_floating_point and not (nondiff and _among(o, nondiff)):
                    o._set_history(node, i)
                out_meta.append((o._shape, o.dtype, o.device))
            else:
                out_meta.append(None)
        node._outputs = tuple(out_meta)
        return out


def _among(t, ts):
    """Whether tensor t is one of ts (by identity: `in` would compare values)."""
    for o in ts:
        if o is t:
            return True
    return False


_NO_EDGE = (None, 0)


def _alias_saved_outputs(ctx, outs, node):
    """Saved outputs are kept as detached aliases (same storage and version counter): an
    output holding its own node through ctx would be a reference cycle, keeping device
    memory alive until Python's cycle collector runs."""
    # (identity, in C: `in outs` would compare tensors by value; most nodes save no output)
    if set(map(id, outs)).isdisjoint(map(id, ctx._saved)):
        return
    saved = list(ctx._saved)
    origins = list(ctx._saved_origins) or [None] * len(saved)
    for j, s in enumerate(saved):
        for i, o in enumerate(outs):
            if s is not None and s is o:
                saved[j], origins[j] = o.detach(), (i, node.name())
    ctx._saved, ctx._saved_origins = tuple(saved), tuple(origins)


def once_differentiable(fn):
    return fn


def _zeros(shape, dtype, device):
    """A gradient of zeros for an output that got none (materialize_grads): a storage of the
    device's and a fill (zero_, installed on Tensor by the ops above)."""
    storage = backend_for(device.type).empty_storage(numel(shape), dtype)
    return Tensor._make(storage, shape, contiguous_strides(shape), 0, dtype, device).zero_()
