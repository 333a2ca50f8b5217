"""Running an op of the elementwise table without autograd: broadcasting, the output, the
in-place and out= checks, then the backend's kernel (or, for a fresh float32 output, a pending
node that later ops fuse: DtypePlan.fresh). run() is the general form; unary, binary_number and
binary_tensor are its unrolled twins for the common signatures (every op comes here: their
Python time counts)."""

from math import prod

from ... import _dtype as D, lazy
from ..._size import Size, broadcast_shapes, contiguous_strides, view_strides
from ...backends import backend_for
from ...backends.plans import ElementwiseDtypes
from ..operands import check_inplace_dtype, compute_class, empty, expand_to, is_tensor, same_view
from .dtype_plan import NUMBER_TYPES, PLANS, DtypePlan, check_fill, device_error, host_checks
from .table import OPS


def run(name, *operands, out=None, out_dtype=None):
    """out = op(operands) with broadcasting; out (a tensor) makes it in-place / out=."""
    # One pass over the operands (every op comes here: its Python time counts): their common
    # device (as operands.common_device), the plan's cache key (per operand its dtype and
    # whether it is 0-d, or a Python number's type; None: planned each time, its dtype may
    # depend on the value) and their shape, broadcast below only where they differ.
    dev = shape = None
    same = True
    key = [name]
    for o in operands:
        t = type(o)
        if getattr(t, "_is_torchweb_tensor", False):
            d = o.device
            if dev is None:
                dev = d
            elif d is not dev and d != dev:
                device_error(dev, d, name)
            s = o._shape
            if shape is None:
                shape = s
            elif s != shape:
                same = False
            if key is not None:
                key += (o.dtype, not s)
        elif key is not None:
            if t in NUMBER_TYPES:
                key.append(t)
            else:
                key = None
    if out is not None:
        d = out.device
        if dev is None:
            dev = d
        elif d is not dev and d != dev:
            device_error(dev, d, name)
    if dev is None:
        raise TypeError(f"{name}(): expected at least one tensor operand")
    op = OPS[name]
    if key is None:   # an operand neither tensor nor number (a numpy scalar, complex, None)
        _refuse_none(name, operands)
        plan = DtypePlan(op, operands, backend_for(dev.type))
    else:
        key.append(dev.type)
        key = tuple(key)
        plan = PLANS.get(key)
        if plan is None:
            plan = PLANS[key] = DtypePlan(op, operands, backend_for(dev.type))
    if plan.host_checks:
        host_checks(op, operands, plan, dev)
    if not same:
        shape = Size(broadcast_shapes(*[o._shape for o in operands if getattr(type(o), "_is_torchweb_tensor", False)]))
    if out is None:
        dt = out_dtype or plan.result
        # (operands.empty without its checks: a broadcast shape is valid already)
        out = plan.make(plan.empty(prod(shape), dt), shape, dt, dev)
        # a fresh output overlaps no operand: each is only broadcast to the shape
        ops = tuple([expand_to(o, shape) if getattr(type(o), "_is_torchweb_tensor", False) else o
                     for o in operands]) if not same else operands
        if dt is plan.result:
            plan.fresh(out, ops)
            return out
    else:
        oshape = out._shape
        # (in place, x.add_(y): every shape out's already, the common case, needs no broadcasting)
        if shape != oshape and broadcast_shapes(shape, oshape) != tuple(oshape):
            raise RuntimeError(f"output with shape {list(oshape)} doesn't match the broadcast "
                               f"shape {list(shape)}")
        if plan.result is not out.dtype:
            check_inplace_dtype(plan.result, out.dtype)
        ops = []
        out_storage = out._storage
        for o in operands:
            if getattr(type(o), "_is_torchweb_tensor", False):
                if o._shape != oshape:
                    o = expand_to(o, oshape)
                # an input overlapping the output in another layout would race: copy it first
                if o._storage is out_storage and o is not out and not same_view(o, out):
                    o = copy_of(o)
            ops.append(o)
    lazy.elementwise(op, out, ops, plan)
    return out


def _refuse_none(name, operands):
    """None where a tensor or a number goes (torch.add(x, None)): PyTorch's TypeError, here
    rather than as NaN or an error at the kernel's flush."""
    for i, o in enumerate(operands):
        if o is None:
            what = "other" if i == len(operands) - 1 else "input"
            raise TypeError(f"{name}(): argument '{what}' (position {i + 1}) must be Tensor, not NoneType")


# binary_number, binary_tensor, unary: run's steps for one signature shape, the operand loop
# unrolled and a known signature's plan used as is (an unknown one goes through run, which
# plans it). Output made inline, not by a helper: these run for every op.

def binary_number(name, a, b):
    """run(name, a, b) for a tensor a and b of type int, float or bool."""
    dev = a.device
    shape = a._shape
    plan = PLANS.get((name, a.dtype, not shape, type(b), dev.type))
    if plan is None:
        return run(name, a, b)
    if plan.host_checks:
        host_checks(plan.op, (a, b), plan, dev)
    dt = plan.result
    out = plan.make(plan.empty(prod(shape), dt), shape, dt, dev)
    plan.fresh(out, (a, b))
    return out


def binary_tensor(name, a, b):
    """run(name, a, b) for tensors a and b."""
    dev = a.device
    d = b.device
    if d is not dev and d != dev:
        device_error(dev, d, name)
    shape = a._shape
    bshape = b._shape
    plan = PLANS.get((name, a.dtype, not shape, b.dtype, not bshape, dev.type))
    if plan is None:
        return run(name, a, b)
    if plan.host_checks:
        host_checks(plan.op, (a, b), plan, dev)
    if bshape != shape:
        shape = Size(broadcast_shapes(shape, bshape))
        a, b = expand_to(a, shape), expand_to(b, shape)
    dt = plan.result
    out = plan.make(plan.empty(prod(shape), dt), shape, dt, dev)
    plan.fresh(out, (a, b))
    return out


def unary(name, a):
    """run(name, a) for a tensor a and no out= (binary's one-operand twin)."""
    dev = a.device
    shape = a._shape
    plan = PLANS.get((name, a.dtype, not shape, dev.type))
    if plan is None:
        return run(name, a)
    if plan.host_checks:
        host_checks(plan.op, (a,), plan, dev)
    dt = plan.result
    out = plan.make(plan.empty(prod(shape), dt), shape, dt, dev)
    plan.fresh(out, (a,))
    return out


def runner(operands):
    """What run_any runs for operands of these types: run(name, *operands) or its unrolled twin."""
    if len(operands) <= 2 and is_tensor(operands[0]):
        if len(operands) == 1:
            return unary
        if type(operands[1]) in NUMBER_TYPES:
            return binary_number
        if is_tensor(operands[1]):
            return binary_tensor
    return run


def run_any(name, operands):
    """run(name, *operands) without out=, through unary, binary_number or binary_tensor where
    the signature is one of theirs (one or two operands, a tensor first)."""
    n = len(operands)
    if n <= 2 and getattr(type(operands[0]), "_is_torchweb_tensor", False):
        if n == 1:
            return unary(name, operands[0])
        b = operands[1]
        tb = type(b)
        if tb in NUMBER_TYPES:
            return binary_number(name, operands[0], b)
        if getattr(tb, "_is_torchweb_tensor", False):
            return binary_tensor(name, operands[0], b)
    return run(name, *operands)


def run_args(name, *operands):
    """run_any with the operands as arguments: the backward rules' raw runner (rule_kernels.K)."""
    return run_any(name, operands)


def copy_of(t):
    c = empty(t.shape, t.dtype, t.device)
    run("copy", t, out=c)
    return c


def contiguous_operand(t):
    """t itself when contiguous, else a contiguous copy of it (no autograd): the layout a
    backend primitive that walks its operand row-major reads."""
    return t if t.is_contiguous() else copy_of(t)


def copy_into(dst, src):
    """dst[...] = src with broadcasting and dtype conversion (the body of copy_)."""
    if not is_tensor(src):
        return fill(dst, src)
    if src.device is not dst.device and src.device != dst.device:
        src = src.to(dst.device)
    op = OPS["copy"]
    shape = dst._shape
    if src._shape != shape and broadcast_shapes(src._shape, shape) != tuple(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(src.shape, shape))}")
    target = dst
    if src._storage.pending is not None and src._shape == shape:
        target, src = _through_pending_copy(dst, src)
    s = expand_to(src, target._shape)
    if s._storage is target._storage and not same_view(s, target):
        s = copy_of(s)
    lazy.elementwise(op, target, [s], _one_dtype(src.dtype, "copy"))
    return dst


_COPY_KEY = (("copy", "f"), ("t", "f", "f32"))


def _through_pending_copy(dst, src):
    """Where src's values are a pending copy of a strided float32 view (a reshape's, a
    contiguous()'s), (dst, that view) in one shape, read in src's place: copying into a part of
    another tensor (cat, a split's gradient) then takes one kernel, not the copy's and then
    this one. Otherwise (dst, src) as they are."""
    node = src._storage.pending
    if node.key != _COPY_KEY or src._offset or src._stride != contiguous_strides(src._shape) \
            or src._storage.numel != prod(src._shape):
        return dst, src
    storage, stride, offset, dtype = node.leaves[0]
    make = type(src)._make
    if src._shape == node.shape:
        return dst, make(storage, src._shape, stride, offset, dtype, src.device)
    seen = view_strides(node.shape, stride, src._shape)     # the source seen in src's shape
    if seen is not None:
        return dst, make(storage, src._shape, seen, offset, dtype, src.device)
    into = view_strides(dst._shape, dst._stride, node.shape)   # or dst seen in the copy's
    if into is not None:
        return (make(dst._storage, node.shape, into, dst._offset, dst.dtype, dst.device),
                make(storage, node.shape, stride, offset, dtype, src.device))
    return dst, src


def fill(dst, value):
    op = OPS["fill"]
    dt = dst.dtype
    if dt is D.bool:
        value = bool(value)
    elif not dt.is_floating_point:
        if isinstance(value, float):
            # (a float is checked as a float, as PyTorch's checked_convert: -0.5 or 255.5 do not
            # fit uint8_t, where the int -1 wraps to 255)
            lo, hi = (0, 255) if dt is D.uint8 else dt.scalar_range
            if not lo <= value <= hi:   # (NaN fails both)
                raise RuntimeError(f"value cannot be converted to type {dt.c_int} without overflow")
        value = int(value)
        check_fill(value, dt, dst.device)
    elif dt is D.float32 and isinstance(value, (int, float)) and dt.max < abs(value) < float("inf"):
        raise RuntimeError("value cannot be converted to type float without overflow")
    elif dt is D.float16 and isinstance(value, int) and abs(value) > dt.max:
        # (PyTorch checks a Python int against half's range, not a float: 1e5 fills inf)
        raise RuntimeError("value cannot be converted to type c10::Half without overflow")
    lazy.elementwise(op, dst, [value], _one_dtype(dt, "fill"))
    return dst


_ONE_DTYPE = {}


def _one_dtype(dt, name):
    """The ElementwiseDtypes of copy (from a tensor of dt) or fill (a number) into dt (computed
    in dt's class), made once for each: a plan is for one signature (lazy._defer keys by it)."""
    d = _ONE_DTYPE.get((dt, name))
    if d is None:
        cls = compute_class(dt)
        d = _ONE_DTYPE[dt, name] = ElementwiseDtypes((dt,), cls, (cls,), cls)
    return d
