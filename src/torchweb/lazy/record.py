"""Recording: an elementwise op whose output is a fresh float32 tensor is not run; its storage
becomes *pending*, holding the op as an expression over its operands (graph.Node). A later
elementwise op that reads a pending storage whole (same shape, no broadcast) takes the
expression into its own, so a chain of ops becomes one kernel, run (the backend's run_fused)
when something needs the bytes (realize.py).

What keeps PyTorch's eager semantics:
- Whatever needs a storage's bytes realizes it first (realize.py), and whatever writes it
  first realizes every pending storage that reads it (so a write after a deferred read sees
  the old values, as eager order would).
- Only ops without device-side checks are deferred (integer division by zero stays eager, so
  its error points at the op), and only float32 results (no rounding of an intermediate is
  skipped).
- Expressions are bounded (MAX_NODES ops, MAX_LEAF_BUFFERS distinct input buffers: WebGPU's
  8 storage buffers per dispatch), and a pending storage is taken into one consumer's
  expression only (a second consumer reads it written: fan-out never repeats work).

Recording is the hot path of every float32 elementwise op, so what depends only on the op's
dtype plan (whether it may be deferred, its operands' parts of the kernel's cache key) is
decided once per plan (`template`), and each node carries what realizing its expression needs
(its structural key, leaves and scalars in kernel order), built from its children's as ops are
recorded: the realize does not walk the expression unless it compiles a kernel.

TORCHWEB_LAZY=0 in the environment turns deferral off (every op run as it comes).
"""

import os

from math import prod
from types import MethodType
from weakref import ref

from .. import _dtype
from .._size import _CONTIGUOUS
from ..backends import backend_for
from .graph import Node, register
from .realize import realize

ENABLED = os.environ.get("TORCHWEB_LAZY", "1") != "0"
MAX_NODES = 48
MAX_LEAF_BUFFERS = 6
_F32, _U8 = _dtype.float32, _dtype.uint8


class Template:
    """What recording an op needs that its dtype plan decides (template()): opkey, (op name,
    class); tokens, each operand's key token; f32, per operand whether it is a float32 tensor
    (which may be an inlined child); tensors, the positions of the tensor operands; scalars,
    the positions of the scalar ones, and their slice of the operands if they are contiguous
    (spans); pre and post: the key's parts around the token of the first tensor operand,
    leaf_key: the key where that operand is a leaf and the only tensor; first: the position
    of that operand (where it is the only one), first_f32: its f32.
    record: the recorder bound to this template, (out, operands) -> None, which makes out
    pending or, where it may not (empty, or its inputs too many buffers), runs the op now:
    _single for ops with one tensor operand and their numbers side by side (unary ops, a
    tensor and numbers), _pair for two and no numbers, _general for others. A plan whose
    template defers has it as its `fresh`. op and plan: the op's row and its dtype plan, what
    running it now takes (a template is made for one plan: they need not be passed each call)."""

    __slots__ = ("opkey", "tokens", "f32", "tensors", "scalars", "spans", "pre", "post", "leaf_key",
                 "first", "first_f32", "record", "grid_limited", "op", "plan")

    def __init__(self, opkey, tokens, f32, grid_limited, op, plan):
        self.opkey, self.tokens, self.f32 = opkey, tokens, f32
        self.tensors = tuple(i for i, t in enumerate(tokens) if t[0] == "t")
        self.scalars = sc = tuple(i for i, t in enumerate(tokens) if t[0] == "s")
        self.spans = slice(0, 0) if not sc else slice(sc[0], sc[-1] + 1) if sc[-1] - sc[0] == len(sc) - 1 else None
        i = self.tensors[0] if self.tensors else 0
        self.pre, self.post = (opkey,) + tokens[:i], tokens[i + 1:]
        self.leaf_key = self.pre + tokens[i:i + 1] + self.post
        self.first, self.first_f32 = i, bool(f32) and f32[i]
        # (bound: the template reaches its recorder as an argument passed in C, not looked up)
        self.record = MethodType(_single if len(self.tensors) == 1 and self.spans is not None else
                                 _pair if len(self.tensors) == 2 and not self.scalars else _general, self)
        self.grid_limited = grid_limited   # the backend's GRID_LIMITED: the recorders check the size
        self.op, self.plan = op, plan


def template(op, out, operands, dtypes, backend):
    """op's Template, from its dtype plan (backends/plans.py ElementwiseDtypes) and the
    operands of one call; False where the op must run now."""
    cls = dtypes.cls
    if dtypes.value_cls != "f" or out.dtype is not _F32 or not ENABLED or (
            op.divisor >= 0 and cls in ("i", "u") and getattr(operands[op.divisor], "_storage", None) is not None):
        return False   # (a zero integer divisor in a tensor is checked on the device: at the op)
    tokens, f32 = [], []
    for o, c, dt in zip(operands, dtypes.classes, dtypes.compute):
        if getattr(o, "_storage", None) is None:
            if dt is _U8 or c != "f":
                return False   # (scalars are passed as float32: deferred ops compute in f32)
            tokens.append(("s", c))
        elif dt is not o.dtype and dt is not None and _narrowed(o.dtype, dt):
            return False   # operands rounded to float16 / wrapped to uint8 first: eager
        else:
            tokens.append(("t", c, o.dtype.gpu_storage))
        f32.append(getattr(o, "dtype", None) is _F32)
    Node.ROWS[op.name] = op
    return Template((op.name, cls), tuple(tokens), tuple(f32), backend.GRID_LIMITED, op, dtypes)


def _narrowed(dtype, computed_in):
    """Whether an operand of dtype is narrowed to the dtype its op computes in (wider ints
    wrap to uint8, ints and floats round to float16), as PyTorch casts to the common dtype."""
    if computed_in is _U8:
        return dtype is not _U8 and dtype is not _dtype.bool
    return computed_in is _dtype.float16 and dtype is not _dtype.float16


def elementwise_fresh(plan, out, operands):
    """Plan.fresh (ops/elementwise.py), bound to its plan, at the plan's first call: the
    elementwise op (plan.op) for an output it just made (contiguous, fresh, read by no one;
    operands: a tuple). The plan's template decided here, plan.fresh becomes what later calls
    run, (out, operands) -> None: the template's recorder (pending where it may be) or the
    backend's kernel."""
    tpl = plan.lazy = template(plan.op, out, operands, plan, backend_for(out._storage.device_type))
    plan.fresh = tpl.record if tpl else MethodType(_run_plan, plan)
    plan.fresh(out, operands)


def _run_now(op, out, operands, dtypes):
    backend_for(out._storage.device_type).elementwise(op, out, operands, dtypes)


def _run_plan(plan, out, operands):
    backend_for(out._storage.device_type).elementwise(plan.op, out, operands, plan)


def elementwise(op, out, operands, dtypes):
    """out = op(operands) for any out (out=, in place, copy_, fill_): recorded as pending where
    out's storage is fresh (a buffer never taken) and whole, else run now by the backend."""
    backend = backend_for(out._storage.device_type)
    tpl = _deferrable(op, out, operands, dtypes, backend)
    if tpl:
        tpl.record(out, tuple(operands))
    else:
        backend.elementwise(op, out, operands, dtypes)


def _deferrable(op, out, operands, dtypes, backend):
    """The template of out = op(operands) where out may be made pending, else False."""
    if dtypes.value_cls != "f" or out.dtype is not _F32 or not ENABLED:
        return False
    s = out._storage
    if s.touched or s.pending is not None or s.readers or out._offset:
        return False
    n = s.numel
    shape = out._shape
    # (contiguous strides are the common case; else the general test)
    if n == 0 or (out._stride != _CONTIGUOUS.get(shape) and not out.is_contiguous()) or prod(shape) != n:
        return False
    # (the template is the plan's, as elementwise_fresh's: a plan is made for one signature,
    # its operands' kinds and dtypes; per plan and backend, out float32; the plan itself in
    # the key, so that no other plan takes its id)
    key = (dtypes, backend)
    tpl = _TEMPLATES.get(key)
    if tpl is None:
        if len(_TEMPLATES) > 4096:
            _TEMPLATES.clear()
        tpl = _TEMPLATES[key] = template(op, out, operands, dtypes, backend)
    return tpl


_TEMPLATES = {}   # (dtype plan, backend) -> template() for elementwise (copy_, fill_, out=, in place)


def _fusable(rt, n, operands):
    """Whether a fused kernel may write n elements from operands, on a runtime whose
    defer_numel n passes: refused at the call past what a folded grid holds; not past the
    binding limit, nor reading a storage past it (rt.big): the eager kernels split those."""
    if n > rt.max_workgroups << 8:
        rt.grid(-(-n // 256))
    if n * 4 > rt.max_binding:
        return False
    big = rt.big
    if not big:
        rt.defer_numel = rt.max_fused_numel()   # (the last one died)
        return True
    return not any(getattr(o, "_storage", None) in big for o in operands)


# The recorders: out = op(operands) made pending (or run now where out is empty, too large for
# a fused kernel, or its inputs are too many buffers). tpl: the template they are bound to
# (Template.record), holding the op and its dtype plan (what the backend's kernel takes).
# An operand that is a pending float32 storage read whole in out's shape is inlined (its
# expression taken into the node: its leaves' strides index that shape), into one consumer
# only: a second consumer reads it written, so fan-out never multiplies the work or the memory
# traffic. (A pending storage holds exactly its node's shape; operands have out's shape,
# broadcast already.) A pending operand not inlined is written now: a pending leaf would keep
# its own inputs alive, and chains of them would grow memory without bound in loops that
# never read back. A node that inlines a child and reads no other buffer joins the child's
# group (registered already); others start a group (graph.register). Each checks, inline
# (every deferred op asks), that a fused kernel may write out: not empty, and on a grid-limited
# backend within what one may write (_fusable); _single only where it inlines no child (a
# child of out's shape passed that check when a recorder made it, and reads no buffer too
# large: any node a recorder may inline must have, a node made elsewhere included).

def _single(tpl, out, operands):
    """One tensor operand, its numbers side by side (unary ops, a tensor and numbers)."""
    s = out._storage
    o = operands[tpl.first]
    os_ = o._storage
    child = os_.pending
    shape = out._shape
    scalars = operands[tpl.spans]
    if child is not None:
        if tpl.first_f32 and not child.inlined:
            key, leaves, child_scalars, child_shape, size, storages, group = child   # (a Node is a tuple)
            if child_shape == shape and o._offset == 0 and o._stride == out._stride and size < MAX_NODES:
                # (out is not empty, nor too large for a fused kernel: the child, of its shape,
                # passed the check below when it was recorded)
                child.inlined = True
                group.append(ref(s))
                s.pending = Node((tpl.pre + (key,) + tpl.post, leaves, child_scalars + scalars, shape, size + 1,
                                  storages, group))
                return
    n = s.numel
    if not n or tpl.grid_limited and n > s.rt.defer_numel and not _fusable(s.rt, n, operands):
        return _run_now(tpl.op, out, operands, tpl.plan)
    if child is not None:
        realize(os_)
    storages = {id(os_): os_}
    s.pending = Node((tpl.leaf_key, [(os_, o._stride, o._offset, o.dtype)], scalars, shape, 1,
                      storages, register(s, storages)))


def _pair(tpl, out, operands):
    """Two tensor operands, no numbers (binary ops of tensors): _general unrolled."""
    s = out._storage
    n = s.numel
    if not n or tpl.grid_limited and n > s.rt.defer_numel and not _fusable(s.rt, n, operands):
        return _run_now(tpl.op, out, operands, tpl.plan)
    a, b = operands
    shape = out._shape
    stride = out._stride
    sa = a._storage
    ca = sa.pending
    # (size: the nodes of the children taken in; this node adds one)
    if ca is not None and tpl.f32[0] and not ca.inlined and ca.shape == shape \
            and a._offset == 0 and a._stride == stride and ca.size < MAX_NODES:
        ca.inlined = True
        pa, leaves, scalars, _, size, storages, group = ca   # (one unpacking: a Node is a tuple)
    else:
        if ca is not None:
            realize(sa)
        pa, leaves, scalars, size, storages, group = tpl.tokens[0], [(sa, a._stride, a._offset, a.dtype)], (), 0, {id(sa): sa}, None
    sb = b._storage
    cb = sb.pending   # (after a's: b may be a, inlined or written just now)
    if cb is not None and tpl.f32[1] and not cb.inlined and cb.shape == shape \
            and b._offset == 0 and b._stride == stride and size + cb.size < MAX_NODES:
        cb.inlined = True
        pb, leaves, scalars, size = cb.key, leaves + cb.leaves, scalars + cb.scalars, size + cb.size
        if group is None and id(sa) in cb.storages:   # (a a leaf that b's expression reads too)
            storages, group = cb.storages, cb.group
        else:
            storages, group = storages | cb.storages, None
            if len(storages) > MAX_LEAF_BUFFERS:
                return _run_now(tpl.op, out, operands, tpl.plan)
    else:
        if cb is not None:
            realize(sb)
        pb, leaves = tpl.tokens[1], leaves + [(sb, b._stride, b._offset, b.dtype)]
        if id(sb) not in storages:   # (else, y + w in a loop: w is among y's inputs, shared)
            storages, group = storages | {id(sb): sb}, None
            if len(storages) > MAX_LEAF_BUFFERS:
                return _run_now(tpl.op, out, operands, tpl.plan)
    # (the buffer count is checked only where the union grows: every node's storages hold at
    # most MAX_LEAF_BUFFERS, the recorders' check and the fusing scope's _MAX_INPUTS)
    if group is not None:
        group.append(ref(s))
    else:
        group = register(s, storages)
    s.pending = Node(((tpl.opkey, pa, pb), leaves, scalars, shape, size + 1, storages, group))


def _general(tpl, out, operands):
    """Any operands."""
    s = out._storage
    n = s.numel
    if not n or tpl.grid_limited and n > s.rt.defer_numel and not _fusable(s.rt, n, operands):
        return _run_now(tpl.op, out, operands, tpl.plan)
    key = [tpl.opkey]
    shape = out._shape
    stride = out._stride
    leaves = []
    scalars = []
    own = []        # this node's scalars (after its children's)
    size = 1
    storages = {}   # every buffer the expression reads (Node.storages), built as we go
    for o, token, f32 in zip(operands, tpl.tokens, tpl.f32):
        if token[0] == "s":
            key.append(token)
            own.append(o)
            continue
        os_ = o._storage
        child = os_.pending
        if child is not None and f32 and not child.inlined and child.shape == shape \
                and o._offset == 0 and o._stride == stride and size + child.size <= MAX_NODES:
            child.inlined = True
            key.append(child.key)
            leaves += child.leaves
            scalars += child.scalars
            size += child.size
            storages.update(child.storages)
        else:
            if child is not None:
                realize(os_)
            key.append(token)
            leaves.append((os_, o._stride, o._offset, o.dtype))
            storages[id(os_)] = os_
    if len(storages) > MAX_LEAF_BUFFERS:
        return _run_now(tpl.op, out, operands, tpl.plan)
    s.pending = Node((tuple(key), leaves, tuple(scalars + own), shape, size, storages, register(s, storages)))
