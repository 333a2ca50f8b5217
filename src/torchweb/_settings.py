"""Global switches scripts set: matmul precision, deterministic algorithms. torchweb's kernels
are deterministic except where documented (atomic scatter-adds), and its float32 matmuls always
accumulate in float32, so these record the choice and change nothing."""

_state = {"matmul_precision": "highest", "deterministic": False, "warn_only": False}


def set_float32_matmul_precision(precision):
    if precision not in ("highest", "high", "medium"):
        import warnings  # PyTorch warns and keeps the current setting
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision():
    return _state["matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, name=None, recompile_limit=None, isolate_recompiles=False,
            shapes_spec=None):
    """torch.compile: capture and replay on the webgpu device (torchweb/_compile.py).
    (name, recompile_limit, isolate_recompiles, shapes_spec steer PyTorch's Dynamo
    recompilation; a replay here is guarded per call signature, so they change nothing.)"""
    from ._compile import compile as _compile
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options, disable=disable)
