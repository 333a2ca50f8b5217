"""Elementwise ops under autograd: apply() runs the table op (raw.py) and, when an operand
requires grad, makes the node; the backward rule, what it saves and the node's name come from
the op's row (table.py, rules in grads.py). Gradients for broadcast operands are summed back to
their shapes by the autograd engine, as PyTorch's does."""

from ..._complex_routes import ROUTES as COMPLEX
from ..._tensor import Tensor
from ...autograd.function import Function, FunctionCtx, Node
from ...autograd.grad_mode import _state as _grad
from ..operands import is_tensor
from . import raw as E
from .table import OPS


def _saves(op, operands, needs):
    """(indices of the operands to save, whether to save the result) for the needed grads:
    saving only what the backward reads lets in-place ops that follow modify the rest, as in
    PyTorch."""
    if op.saves == "":
        return (), False
    if op.saves == "y":
        return (), True
    read_by = op.saves if isinstance(op.saves, dict) else None
    idx = tuple(i for i, o in enumerate(operands) if is_tensor(o) and (
        read_by is None or any(needs[j] for j in read_by.get(i, ()))))
    return idx, op.result_for >= 0 and needs[op.result_for]


_FUNCTIONS = {}   # (name, node name, inplace) -> Function; (name, inplace) where the name is one
_NODE_NAMES = {}   # op name -> its node's name (or the pair of names), as _function derives it


def _function(name, operands, inplace=False):
    """The autograd Function of op `name` (in place: it writes operands[0])."""
    fn = _FUNCTIONS.get((name, inplace))   # (most ops: one node name, whatever the operands)
    if fn is not None:
        return fn
    names = _NODE_NAMES.get(name)
    if names is None:
        names = _NODE_NAMES[name] = (OPS[name].node or
                                     "".join(p.capitalize() for p in name.split("_")) + "Backward0")
    pair = isinstance(names, tuple)
    if pair:
        names = names[any(is_tensor(o) for o in operands[1:])]
    key = (name, names, inplace)
    fn = _FUNCTIONS.get(key)
    if fn is None:
        fn = _FUNCTIONS[key] = _make_function(name, names, inplace)
    if not pair:
        _FUNCTIONS[name, inplace] = fn
    return fn


def _spec(op, operands, needs):
    """What forward does for operands of these types and these needed grads: (positions of
    the tensor operands, positions of those saved, whether the result is saved, ctx.operands
    when no operand is a number (else None), whether a number counts as saved, the op's
    runner for these operand types (elementwise.runner), and where nothing is saved, what
    save_for_backward would make of its Nones (else None))."""
    tensors = tuple(i for i, o in enumerate(operands) if is_tensor(o))
    idx, keep_y = _saves(op, operands, needs)
    numbers = len(tensors) < len(operands)
    # (PyTorch saves a number operand as a tensor: x * 2's MulBackward0 has saved something)
    return (tensors, idx, keep_y, None if numbers else (None,) * len(operands), numbers and op.saves != "",
            E.runner(operands), None if idx or keep_y else (None,) * (len(tensors) + 1))


def _numbers_only(operands, tensors):
    """operands with None for the tensors (at positions tensors): a node's ctx.operands, the
    numbers its backward rule reads."""
    nones = list(operands)
    for i in tensors:
        nones[i] = None
    return tuple(nones)


def _make_function(name, backward_name, inplace):
    op = OPS[name]
    rule = op.grad
    specs = {}   # (needs_input_grad, operand types) -> _spec: the same for every call of a signature

    def forward(ctx, *operands):
        """In place (the Function of inplace_function, run by Function.apply): operands[0]
        written. (Out of place, the node is made by record / record_number below.)"""
        if not inplace:
            raise RuntimeError("an elementwise op's node is recorded by its Function's _record")
        key = (ctx.needs_input_grad, *map(type, operands))
        spec = specs.get(key)
        if spec is None:
            spec = specs[key] = _spec(op, operands, ctx.needs_input_grad)
        tensors, idx, keep_y, nones, number_saved, _, _ = spec
        xs = operands
        if 0 in idx:
            xs = list(operands)
            xs[0] = E.copy_of(operands[0])  # the value before the write (PyTorch's original_self)
            if operands[0].requires_grad:   # its history, for create_graph (double_backward.py)
                ctx.saved_edges = {0: (operands[0].grad_fn, operands[0]._output_nr)}
        saved = [xs[i] if i in idx else None for i in tensors]
        # versions as before the write: an operand that is the target (y.mul_(y)) can't backward
        versions = tuple(t._version if t is not None else None for t in saved)
        out = E.run(name, *operands, out=operands[0])
        out._bump_version()
        ctx.save_for_backward(*saved, out if keep_y else None)
        ctx._saved_versions = versions + ctx._saved_versions[-1:]
        ctx.operands = nones if nones is not None else _numbers_only(operands, tensors)
        if number_saved:
            ctx._saved_any = True
        return out

    def backward(ctx, g):
        saved = ctx.saved_tensors   # (per tensor operand, then the result)
        operands = ctx.operands     # (the numbers, None for the tensors)
        numbers = len(saved) <= len(operands)
        if numbers:
            it = iter(saved)
            xs = tuple([next(it) if o is None else o for o in operands])
        else:
            xs = saved[:-1]
        grads = rule(g, xs, saved[-1])
        needs = ctx.needs_input_grad
        for gr, need in zip(grads, needs):
            if gr is NotImplemented and need:   # a rule's way to say PyTorch has no derivative there
                raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        if not numbers and False not in needs:
            return tuple(grads)
        return tuple([gr if o is None and need else None for gr, o, need in zip(grads, operands, needs)])

    def record(operands):
        """cls.apply(*operands) out of place (every op recorded for autograd comes here): the
        inputs' edges and metadata, then _finish."""
        needs, edges, metas = [], [], []
        for a in operands:
            if isinstance(a, Tensor):
                metas.append((a._shape, a.dtype))
                # (the property for a view: its history refreshed first)
                if a._requires_grad if a._base is None else a.requires_grad:
                    g = a._grad_fn
                    edges.append((g, a._output_nr) if g is not None else (a._accumulator(), 0))
                    needs.append(True)
                    continue
            else:
                metas.append(None)
            edges.append(_NO_EDGE)
            needs.append(False)
        needs = tuple(needs)
        return _finish(operands, needs, tuple(edges), tuple(metas), (needs, *map(type, operands)))

    def record_number(a, b):
        """record((a, b)) for a tensor a that requires grad and a Python number b (x * 2,
        h + 1: the operators' commonest form under autograd), its one edge taken directly."""
        g = a.grad_fn if a._base is not None else a._grad_fn   # (a view's history refreshed first)
        edge = (g, a._output_nr) if g is not None else (a._accumulator(), 0)
        return _finish((a, b), _FIRST, (edge, _NO_EDGE), ((a._shape, a.dtype), None), _TENSOR_NUMBER,
                       (None, b))

    def _finish(operands, needs, edges, metas, key, numbers=None):
        """Function.apply's and forward's work for this Function's one output, in one frame:
        the op run, what it saves, its node. key: the signature's key in specs; numbers: the
        node's ctx.operands where the caller knows them (None for the tensors)."""
        spec = specs.get(key)
        if spec is None:
            spec = specs[key] = _spec(op, operands, needs)
        tensors, idx, keep_y, nones, number_saved, run, nothing_saved = spec
        out = run(name, *operands)
        if True not in needs:   # (a view's refreshed history required no grad after all)
            return out
        ctx = FunctionCtx()
        ctx.needs_input_grad = needs
        # (no output metadata: the engine skips a one-output node that gets no gradient, so
        # never materializes one for it)
        node = Node(cls, ctx, edges, metas)
        if nothing_saved is not None:
            ctx._saved = ctx._saved_versions = nothing_saved
        else:
            saved = [operands[i] if i in idx else None for i in tensors]
            if keep_y:
                # a detached alias of the output (as _alias_saved_outputs): the output holding
                # its own node through ctx would be a reference cycle
                saved.append(out.detach())
                ctx._saved_origins = (None,) * len(tensors) + ((0, backward_name),)
            else:
                saved.append(None)
            ctx._saved = tuple(saved)
            ctx._saved_versions = versions = tuple([None if t is None else t._storage.version for t in saved])
            ctx._saved_any = versions.count(None) < len(versions)
        ctx.operands = nones if nones is not None else numbers or _numbers_only(operands, tensors)
        if number_saved:
            ctx._saved_any = True
        if out.dtype.is_floating_point:   # (out is fresh: no history of its own to move)
            out._grad_fn = node
            out._requires_grad = True
        return out

    cls = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                   "_backward_name": backward_name, "_forward_is_raw": True,
                                   "_double_backward": True,   # the rules are Tensor ops
                                   "_record": staticmethod(record), "_record_number": staticmethod(record_number)})
    return cls


_NO_EDGE = (None, 0)
_FIRST = (True, False)   # needs_input_grad of a tensor that requires grad and a number
# record_number's key in specs: its spec is the same for any tensor and number types (the
# operands' kinds decide it, and the runner is binary_number's)
_TENSOR_NUMBER = "a tensor that requires grad, a number"


def _any_requires_grad(operands):
    for o in operands:   # a loop, not any(generator): this runs for every op
        # (_requires_grad set: requires_grad is True whatever a view's refresh would do)
        if getattr(type(o), "_is_torchweb_tensor", False) and (
                o._requires_grad or (o._base is not None and o.requires_grad)):
            return True
    return False


def apply(name, operands, out=None):
    """The elementwise op `name` of the table on operands (tensors and Python numbers): planned,
    run (or left pending for fusion) and, when an operand requires grad, recorded for autograd.
    out: a tensor written instead of a new one (out=: PyTorch refuses it under autograd)."""
    if out is None:
        return call(name, *operands)
    if _grad["enabled"] and _any_requires_grad(operands):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    return E.run(name, *operands, out=out)


def call(name, *operands):
    """apply(name, operands) with the operands as arguments: the composites' form, one frame
    less on their path."""
    if _grad["enabled"] and _any_requires_grad(operands):
        return _call_grad(name, operands)
    return E.run_any(name, operands)


def _call_grad(name, operands):
    fn = _FUNCTIONS.get((name, False))   # (_function's first look-up, without its call)
    if fn is not None:
        return fn._record(operands)
    if OPS[name].grad is not None:
        return _function(name, operands)._record(operands)
    out = E.run_any(name, operands)
    if out.dtype.is_floating_point:   # a float result would silently drop the gradient
        raise NotImplementedError(f"the derivative for '{name}' is not implemented")
    return out


_NUMBERS = (int, float, bool)


def binary_operator(name):
    """Tensor's operator for op `name` (a + b, a * b, ...; a: a tensor): call(name, a, b) with
    the operand checks unrolled; NotImplemented where b is neither a tensor nor a number
    (Python then asks b)."""

    def operator(a, b):
        tb = type(b)
        if tb in _NUMBERS:
            # (grad mode read only where an operand may need it: most need none; a view's
            # requires_grad, a property, read only with grad mode on, as it may renew its history)
            if a._requires_grad and _grad["enabled"] or a._base is not None and _grad["enabled"] and a.requires_grad:
                fn = _FUNCTIONS.get((name, False))   # (_call_grad's first look-up)
                return fn._record_number(a, b) if fn is not None else _call_grad(name, (a, b))
            return E.binary_number(name, a, b)
        if getattr(tb, "_is_torchweb_tensor", False):
            if (a._requires_grad or b._requires_grad) and _grad["enabled"] or \
                    (a._base is not None or b._base is not None) and _grad["enabled"] and \
                    (a.requires_grad or b.requires_grad):
                return _call_grad(name, (a, b))
            return E.binary_tensor(name, a, b)
        if isinstance(b, _NUMBERS):   # (a subclass: numpy's float64, say)
            return call(name, a, b)
        if tb is complex:   # x * 1j: a complex64 result (torchweb/_complex/)
            return COMPLEX["binary"](name, a, b)
        return NotImplemented

    return operator


def inplace_function(name, operands):
    """The Function that runs op `name` in place on operands[0], for ops/inplace.py."""
    return _function(name, operands, inplace=True)
