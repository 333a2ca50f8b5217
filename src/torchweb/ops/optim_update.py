"""The fused elementwise update that optimizers run (one kernel per parameter and step): the
op between torchweb.optim and the backends' `fused_update` primitive.

Operands must share a device and a numel. A non-contiguous operand is computed through a
contiguous copy, copied back afterwards when it is written. Written tensors get their version
bumped (autograd's check on saved tensors sees the in-place change)."""

from ..backends import backend_for
from .operands import common_device
from .elementwise import copy_of, copy_into
from ..backends.webgpu.runtime import _runtime


def fused_update(key, tensors, names, writes, body, scalar_names=(), scalars=(), fresh=()):
    """Run `body` ([(target, expression)] over the names, temporaries and scalars; + - * /,
    sqrt, abs, max, min) elementwise over `tensors`, storing the names in `writes` in place.
    `key` names the update (it and the body's text key the compiled kernel). The names in
    `fresh` (written tensors just allocated) are read as zeros, so new state needs no fill."""
    dev = common_device(*tensors, what=key)
    n = tensors[0].numel()
    for name in fresh:
        if name not in writes:
            raise RuntimeError(f"{key}: fresh operand {name} must be written")
    for t in tensors:
        if t.numel() != n:
            raise RuntimeError(f"{key}: expected tensors of {n} elements, got one of shape {list(t.shape)}")
    if n == 0:
        return
    work = [t if t.is_contiguous() else copy_of(t) for t in tensors]
    backend_for(dev.type).fused_update(key, work, list(names), list(writes), list(body),
                                       list(scalar_names), [float(s) for s in scalars], list(fresh))
    for t, w, name in zip(tensors, work, names):
        if name in writes:
            if w is not t:
                copy_into(t, w)
            t._bump_version()


def recording():
    """The capture.Recorder if torchweb.compile is recording a call on the webgpu device, else
    None: the optimizer then registers how a replay recomputes its scalars."""
    rt = _runtime[0]
    return rt.capture if rt is not None else None
