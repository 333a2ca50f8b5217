"""Planning an elementwise op: from the op's row and its operands' dtypes (and whether each is
0-d, or a Python number's type), the dtype each operand is computed in, the result's dtype and
the checks made on the host. Planned once per signature (PLANS): every op call asks."""

from types import MethodType

from ... import _dtype as D, lazy
from ..._tensor import Tensor
from ...backends.plans import ElementwiseDtypes
from ..operands import compute_class, is_tensor


# ops whose PyTorch CPU kernels read a 0-d second operand as a float32 scalar when the result
# is float16 or bfloat16 (measured against torch 2.13: a first operand, and the other ops'
# operands, are rounded to the result's dtype first)
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


def check_fill(value, dt, device):
    lo, hi = dt.scalar_range
    if not lo <= value <= hi:
        raise RuntimeError(f"value cannot be converted to type {dt.c_scalar} without overflow")
    if device.type == "webgpu":
        _check_gpu_int_scalars([value], [dt])


def _is_bool(o):
    return o.dtype is D.bool if is_tensor(o) else isinstance(o, bool)


class DtypePlan(ElementwiseDtypes):
    """What an op's signature decides (planned once per key: see run): the dtypes and classes
    its kernel reads (ElementwiseDtypes, what the backend's elementwise takes), the result
    dtype; host_checks: Python numbers to check on the host (int64 range, a zero integer
    divisor); and what each call then needs, looked up once: the op's row, the device's
    storage_maker(), Tensor._new, and fresh(out, operands), the lazy layer's elementwise
    for an output just made (deferred where it may be: torchweb/lazy; its first call makes it
    the recorder of the plan's template, or the backend's kernel); lazy: that layer's
    decision for this plan (its template, or False), None until it makes it."""

    __slots__ = ("op", "result", "host_checks", "empty", "make", "fresh", "lazy")

    def __init__(self, op, operands, backend):
        self.op = op
        compute, self.cls, classes, self.value_cls, self.result = _plan(op, operands)
        if op.name in _SCALAR_IN_OPMATH and compute[1] in D.HALF_FLOATS:
            # PyTorch casts operands to a float16 common dtype first (70000 becomes inf), but
            # its CPU mul and divisions take a 0-d second operand as a float32 scalar (every
            # other op rounds it with the rest: fmod(half, tensor(1.2978)) divides by 1.2979)
            o = operands[1]
            if is_tensor(o) and o.dim() == 0:
                compute = [compute[0], D.float32] + list(compute[2:])
        self.compute, self.classes = tuple(compute), tuple(classes)
        self.host_checks = D.int64 in compute or (op.divisor >= 0 and self.cls in ("i", "u")
                                                  and not is_tensor(operands[op.divisor]))
        self.empty = backend.storage_maker()   # (bound to the device: PLANS is cleared when it is lost)
        if not _WATCHING.get(backend.name):
            _WATCHING[backend.name] = True
            backend.on_device_lost(lambda _rt: PLANS.clear())
        self.make = Tensor._new
        self.fresh = MethodType(lazy.elementwise_fresh, self)
        self.lazy = None


# Plans by what decides them (op, per operand its dtype and whether it is 0-d, or a Python
# number's type, and the device type; and the default float dtype: emptied when it changes):
# every op call asks, and planning is much of its Python time.
PLANS = {}
D.DEFAULT_FLOAT_LISTENERS.append(PLANS.clear)
NUMBER_TYPES = (int, float, bool)
_WATCHING = {}   # backend name -> True once PLANS is cleared when its device is lost


def device_error(a, b, what):
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                       f"devices, {a} and {b}! (in {what})")


def host_checks(op, operands, plan, dev):
    if dev.type == "webgpu" and D.int64 in plan.compute:
        _check_gpu_int_scalars(operands, plan.compute)
    d = op.divisor
    if d >= 0 and plan.cls in ("i", "u") and not is_tensor(operands[d]) \
            and int(operands[d]) & (0xFF if plan.compute[d] is D.uint8 else 0xFFFFFFFF) == 0:
        # a divisor known on the host, as the kernel would read it (uint8 keeps 8 bits); tensors: backends
        raise RuntimeError("ZeroDivisionError")
