"""The cpu device's fused elementwise update on numpy (the contract of
backends/webgpu/optim_update.py): the same body, evaluated in float32 with numpy."""

from .cpu_arrays import np, view

_COMPILED = {}


def fused_update(key, tensors, names, writes, body, scalar_names, scalars, fresh=()):
    """Run body over contiguous tensors of one numel, in float32; store `writes` back; the
    names in fresh are read as zeros."""
    n = np()
    env = {"sqrt": n.sqrt, "abs": n.abs, "max": n.maximum, "min": n.minimum, "__builtins__": {}}
    for name, value in zip(scalar_names, scalars):
        env[name] = n.float32(value)
    arrays = {}
    for name, t in zip(names, tensors):
        arrays[name] = view(t)
        env[name] = n.zeros(t.shape, n.float32) if name in fresh else view(t).astype(n.float32)
    with n.errstate(all="ignore"):
        for target, expr in body:
            code = _COMPILED.get(expr)
            if code is None:
                code = _COMPILED[expr] = compile(expr, "<fused_update>", "eval")
            env[target] = n.asarray(eval(code, env), dtype=n.float32)
    for name in writes:
        n.copyto(arrays[name], n.broadcast_to(env[name], arrays[name].shape), casting="unsafe")
