"""bfloat16 on the cpu device: numpy has no bfloat16, so its tensors are float32 arrays whose
values are bfloat16's (_dtype.py). Each primitive that writes a tensor gets a wrapper that
rounds what it wrote when that tensor is bfloat16 (the GPU kernels round as they store)."""

import functools
import inspect

from .. import _bfloat16, _dtype
from .cpu_arrays import np, view

# the parameters through which the cpu primitives write their results
OUTPUTS = frozenset(("out", "y", "mean", "rstd", "dx", "dq", "dkv", "lse", "grad_in", "grad_grid",
                     "grad_weight", "dst", "values"))
_BF16 = _dtype.bfloat16


def round_tensor(t):
    """t's elements (a cpu tensor of bfloat16) rounded to bfloat16 where they are."""
    _bfloat16.round_in_place_np(np(), view(t))


def _rounding(fn, slots):
    @functools.wraps(fn)
    def wrapped(*args, **kw):
        result = fn(*args, **kw)
        for i, name in slots:
            t = args[i] if i < len(args) else kw.get(name)
            if getattr(t, "dtype", None) is _BF16:
                round_tensor(t)
        return result
    return wrapped


def round_outputs(namespace, names):
    """Wrap namespace's functions `names` (the backend contract's) that write tensors."""
    for name in names:
        fn = namespace.get(name)
        if not callable(fn) or inspect.iscoroutinefunction(fn):
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        slots = [(i, p) for i, p in enumerate(params) if p in OUTPUTS]
        if slots:
            namespace[name] = _rounding(fn, slots)
