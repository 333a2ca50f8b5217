"""Running an op of the elementwise table: dtype rule, broadcasting, output, in-place checks.
No autograd here: ops/pointwise.py wraps these in autograd Functions."""

from .. import _dtype as D
from math import prod

from .._size import broadcast_shapes, contiguous_strides
from .. import lazy
from ..backends import backend_for
from .dispatch import (check_inplace_dtype, compute_class, empty, expand_to,
                       is_tensor, same_view)
from .elementwise_table import OPS


# ops whose PyTorch CPU kernels read a 0-d operand as a float32 scalar when the result is
# float16 (measured against torch 2.13: the others round it to float16 first)
_SCALAR_IN_OPMATH = frozenset(("mul", "div", "div_trunc", "div_floor", "floor_divide"))


def _plan(op, operands):
    """(compute dtype per operand, template class, class per operand, value class, out dtype)."""
    rule = op.rule
    if op.name == "where":
        vals = operands[1:]
        dt = D.result_type(*vals)
        cls = compute_class(dt)
        return [D.bool, dt, dt], cls, ["b", cls, cls], cls, dt
    if rule == "logical":
        n = len(operands)
        return [D.bool] * n, "b", ["b"] * n, "b", D.bool
    if rule == "pred":
        dt = operands[0].dtype
        cls = compute_class(dt)
        return [dt], cls, [cls], "b", D.bool
    dt = D.result_type(*(operands[:op.promote] if op.promote else operands))
    if op.kernel and (dt is D.bool or (op.ints and not dt.is_floating_point)):
        raise NotImplementedError(f"\"{op.kernel}\" not implemented for '{dt.word}'")
    if rule == "float" and not dt.is_floating_point:
        dt = D.default_float()
    if rule == "intonly" and dt.is_floating_point:
        raise NotImplementedError(f"\"{op.name}_cpu\" not implemented for '{dt.word}'")
    if op.no_bool and dt is D.bool:
        raise RuntimeError(op.no_bool)
    if op.name in ("sub", "sub_alpha") and any(_is_bool(o) for o in operands[:2]):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    cls = compute_class(dt, logical=(op.name == "bitwise_not"))
    n = len(operands)
    if rule == "compare":
        return [dt] * n, cls, [cls] * n, "b", D.bool
    return [dt] * n, cls, [cls] * n, cls, dt


def _check_gpu_int_scalars(operands, compute):
    """int64 is 32 bits on the GPU: refuse a Python int it cannot hold rather than wrap it."""
    for o, dt in zip(operands, compute):
        if dt is D.int64 and isinstance(o, int) and not isinstance(o, bool) and not D.int64.min <= o <= D.int64.max:
            raise RuntimeError(f"value {o} is out of range for torch.int64 on webgpu: WebGPU has no 64-bit "
                               f"integers, so int64 tensors hold values in [-2147483648, 2147483647] on the GPU")


def _check_fill(value, dt, device):
    lo, hi = dt.scalar_range
    if not lo <= value <= hi:
        raise RuntimeError(f"value cannot be converted to type {dt.c_scalar} without overflow")
    if device.type == "webgpu":
        _check_gpu_int_scalars([value], [dt])


def _is_bool(o):
    return o.dtype is D.bool if is_tensor(o) else isinstance(o, bool)


class Plan:
    """What an op's signature decides (planned once per key: see run): the dtype each operand
    is computed in, the template's class, each operand's class, the value class, the result
    dtype; host_checks: Python numbers to check on the host (int64 range, a zero integer
    divisor); and what each call then needs, looked up once: the op's row, the device's
    empty_storage, Tensor._make, and fresh(op, out, operands, plan), the lazy layer's elementwise
    for an output just made (deferred where it may be: torchweb/lazy); lazy: that layer's
    decision for this plan, None until it makes it."""

    __slots__ = ("op", "compute", "cls", "classes", "value_cls", "result", "host_checks",
                 "empty", "make", "fresh", "lazy")

    def __init__(self, op, operands, backend):
        self.op = op
        compute, self.cls, classes, self.value_cls, self.result = _plan(op, operands)
        if D.float16 in compute and op.name in _SCALAR_IN_OPMATH:
            # PyTorch casts operands to a float16 common dtype first (70000 becomes inf), but
            # its CPU mul and divisions take a 0-d tensor as a float32 scalar (every other op
            # rounds it to float16 with the rest: fmod(half, tensor(1.2978)) divides by 1.2979)
            compute = [D.float32 if d is D.float16 and is_tensor(o) and o.dim() == 0 else d
                       for o, d in zip(operands, compute)]
        self.compute, self.classes = tuple(compute), tuple(classes)
        self.host_checks = D.int64 in compute or (op.divisor >= 0 and self.cls in ("i", "u")
                                                  and not is_tensor(operands[op.divisor]))
        self.empty = backend.empty_storage
        self.make = _tensor_class()._make
        self.fresh = lazy.elementwise_fresh
        self.lazy = None


# Plans by what decides them (op, default float dtype, per operand its dtype and whether it is
# 0-d, or a Python number's type, and the device type): every op call asks, and planning is
# much of its Python time.
_PLANS = {}
_NUMBER_TYPES = (int, float, bool)


def _device_error(a, b, what):
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                       f"devices, {a} and {b}! (in {what})")


def _host_checks(op, operands, plan, dev):
    if dev.type == "webgpu" and D.int64 in plan.compute:
        _check_gpu_int_scalars(operands, plan.compute)
    d = op.divisor
    if d >= 0 and plan.cls in ("i", "u") and not is_tensor(operands[d]) \
            and int(operands[d]) & (0xFF if plan.compute[d] is D.uint8 else 0xFFFFFFFF) == 0:
        # a divisor known on the host, as the kernel would read it (uint8 keeps 8 bits); tensors: backends
        raise RuntimeError("ZeroDivisionError")


def run(name, *operands, out=None, out_dtype=None):
    """out = op(operands) with broadcasting; out (a tensor) makes it in-place / out=."""
    # One pass over the operands (every op comes here: its Python time counts): their common
    # device (as dispatch.common_device), the plan's cache key (per operand its dtype and
    # whether it is 0-d, or a Python number's type; None: planned each time, its dtype may
    # depend on the value) and their shape, broadcast below only where they differ.
    dev = shape = None
    same = True
    key = [name, D._default_float[0]]
    for o in operands:
        t = type(o)
        if getattr(t, "_is_torchweb_tensor", False):
            d = o.device
            if dev is None:
                dev = d
            elif d is not dev and d != dev:
                _device_error(dev, d, name)
            s = o._shape
            if shape is None:
                shape = s
            elif s != shape:
                same = False
            if key is not None:
                key += (o.dtype, not s)
        elif key is not None:
            if t in _NUMBER_TYPES:
                key.append(t)
            else:
                key = None
    if out is not None:
        d = out.device
        if dev is None:
            dev = d
        elif d is not dev and d != dev:
            _device_error(dev, d, name)
    if dev is None:
        raise TypeError(f"{name}(): expected at least one tensor operand")
    op = OPS[name]
    if key is None:
        plan = Plan(op, operands, backend_for(dev.type))
    else:
        key.append(dev.type)
        key = tuple(key)
        plan = _PLANS.get(key)
        if plan is None:
            plan = _PLANS[key] = Plan(op, operands, backend_for(dev.type))
    if plan.host_checks:
        _host_checks(op, operands, plan, dev)
    if not same:
        shape = broadcast_shapes(*[o._shape for o in operands if getattr(type(o), "_is_torchweb_tensor", False)])
    if out is None:
        dt = out_dtype or plan.result
        # (dispatch.empty without its checks: a broadcast shape is valid already)
        out = plan.make(plan.empty(prod(shape), dt), shape, contiguous_strides(shape), 0, dt, dev)
        # a fresh output overlaps no operand: each is only broadcast to the shape
        ops = tuple([expand_to(o, shape) if getattr(type(o), "_is_torchweb_tensor", False) else o
                     for o in operands]) if not same else operands
        if dt is plan.result:
            plan.fresh(op, out, ops, plan)
            return out
    else:
        if broadcast_shapes(shape, out.shape) != tuple(out.shape):
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast "
                               f"shape {list(shape)}")
        check_inplace_dtype(plan.result, out.dtype)
        shape = out.shape
        ops = []
        out_storage = out._storage
        for o in operands:
            if getattr(type(o), "_is_torchweb_tensor", False):
                o = expand_to(o, shape)
                # an input overlapping the output in another layout would race: copy it first
                if o._storage is out_storage and not same_view(o, out):
                    o = copy_of(o)
            ops.append(o)
    lazy.elementwise(op, out, ops, plan.classes, plan.cls, plan.value_cls, plan.compute)
    return out


def binary(name, a, b):
    """run(name, a, b) for a tensor a and no out= (the operators' path): binary_number or
    binary_tensor where b is a Python number or a tensor, else run."""
    tb = type(b)
    if tb in _NUMBER_TYPES:
        return binary_number(name, a, b)
    if getattr(tb, "_is_torchweb_tensor", False):
        return binary_tensor(name, a, b)
    return run(name, a, b)


# binary_number, binary_tensor, unary: run's steps for one signature shape, the operand loop
# unrolled and a known signature's plan used as is (an unknown one goes through run, which
# plans it). Output made inline, not by a helper: these run for every op.

def binary_number(name, a, b):
    """run(name, a, b) for a tensor a and b of type int, float or bool."""
    dev = a.device
    shape = a._shape
    plan = _PLANS.get((name, D._default_float[0], a.dtype, not shape, type(b), dev.type))
    if plan is None:
        return run(name, a, b)
    if plan.host_checks:
        _host_checks(plan.op, (a, b), plan, dev)
    dt = plan.result
    out = plan.make(plan.empty(prod(shape), dt), shape, contiguous_strides(shape), 0, dt, dev)
    plan.fresh(plan.op, out, (a, b), plan)
    return out


def binary_tensor(name, a, b):
    """run(name, a, b) for tensors a and b."""
    dev = a.device
    d = b.device
    if d is not dev and d != dev:
        _device_error(dev, d, name)
    shape = a._shape
    bshape = b._shape
    plan = _PLANS.get((name, D._default_float[0], a.dtype, not shape, b.dtype, not bshape, dev.type))
    if plan is None:
        return run(name, a, b)
    if plan.host_checks:
        _host_checks(plan.op, (a, b), plan, dev)
    if bshape != shape:
        shape = broadcast_shapes(shape, bshape)
        a, b = expand_to(a, shape), expand_to(b, shape)
    dt = plan.result
    out = plan.make(plan.empty(prod(shape), dt), shape, contiguous_strides(shape), 0, dt, dev)
    plan.fresh(plan.op, out, (a, b), plan)
    return out


def unary(name, a):
    """run(name, a) for a tensor a and no out= (binary's one-operand twin)."""
    dev = a.device
    shape = a._shape
    plan = _PLANS.get((name, D._default_float[0], a.dtype, not shape, dev.type))
    if plan is None:
        return run(name, a)
    if plan.host_checks:
        _host_checks(plan.op, (a,), plan, dev)
    dt = plan.result
    out = plan.make(plan.empty(prod(shape), dt), shape, contiguous_strides(shape), 0, dt, dev)
    plan.fresh(plan.op, out, (a,), plan)
    return out


def runner(operands):
    """What apply runs for operands of these types: run(name, *operands) or its unrolled twin."""
    if len(operands) <= 2 and is_tensor(operands[0]):
        if len(operands) == 1:
            return unary
        if type(operands[1]) in _NUMBER_TYPES:
            return binary_number
        if is_tensor(operands[1]):
            return binary_tensor
    return run


def apply(name, operands):
    """run(name, *operands) without out=, through unary or binary where they apply (one or
    two operands, a tensor first)."""
    n = len(operands)
    if n <= 2 and getattr(type(operands[0]), "_is_torchweb_tensor", False):
        return binary(name, *operands) if n == 2 else unary(name, operands[0])
    return run(name, *operands)


_tensor_classes = []


def _tensor_class():
    # Tensor, looked up once (_tensor imports ops: a cycle at import time)
    if not _tensor_classes:
        from .._tensor import Tensor
        _tensor_classes.append(Tensor)
    return _tensor_classes[0]


def copy_of(t):
    c = empty(t.shape, t.dtype, t.device)
    run("copy", t, out=c)
    return c


def copy_into(dst, src):
    """dst[...] = src with broadcasting and dtype conversion (the body of copy_)."""
    if not is_tensor(src):
        return fill(dst, src)
    if src.device != dst.device:
        src = src.to(dst.device)
    op = OPS["copy"]
    shape = dst.shape
    if broadcast_shapes(src.shape, shape) != tuple(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(src.shape, shape))}")
    s = expand_to(src, shape)
    if s._storage is dst._storage and not same_view(s, dst):
        s = copy_of(s)
    cls = compute_class(src.dtype)
    lazy.elementwise(op, dst, [s], [cls], cls, cls, [src.dtype])
    return dst


def fill(dst, value):
    op = OPS["fill"]
    dt = dst.dtype
    cls = compute_class(dt)
    if dt is D.bool:
        value = bool(value)
    elif not dt.is_floating_point:
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise RuntimeError(f"value cannot be converted to type {dt.c_int} without overflow")
        value = int(value)
        _check_fill(value, dt, dst.device)
    elif dt is D.float32 and isinstance(value, (int, float)) and dt.max < abs(value) < float("inf"):
        raise RuntimeError("value cannot be converted to type float without overflow")
    elif dt is D.float16 and isinstance(value, int) and abs(value) > dt.max:
        # (PyTorch checks a Python int against half's range, not a float: 1e5 fills inf)
        raise RuntimeError("value cannot be converted to type c10::Half without overflow")
    lazy.elementwise(op, dst, [value], [cls], cls, cls, [dt])
    return dst
