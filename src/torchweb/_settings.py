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
    from ._compile import compile as _compile  # deferred: load time (the capture machinery, with the first torch.compile)
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options, disable=disable)


# -- the rest of the process-wide switches scripts set ---------------------------------------
# Threads: torchweb's host work is one Python thread (Pyodide has one); the GPU runs the kernels.
_state.update(num_threads=1, num_interop_threads=1, warn_always=False, flush_denormal=False,
              deterministic_debug_mode=0)


def get_num_threads():
    return _state["num_threads"]


def set_num_threads(num, /):   # (positional only, as PyTorch's)
    if num < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["num_threads"] = num


def get_num_interop_threads():
    return _state["num_interop_threads"]


def set_num_interop_threads(num, /):
    if num < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _state["num_interop_threads"] = num


def init_num_threads():
    return None


def set_warn_always(b):
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _state["warn_always"]


def set_flush_denormal(mode):
    """PyTorch returns whether the CPU supports flushing denormals; WebGPU gives no control
    over it (GPUs flush float32 denormals as they will), so: False, nothing changed."""
    return False


def set_deterministic_debug_mode(debug_mode):
    modes = {"default": 0, "warn": 1, "error": 2}
    mode = modes.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                           f"but got {debug_mode}")
    _state["deterministic_debug_mode"] = mode
    use_deterministic_algorithms(mode > 0, warn_only=mode == 1)


def get_deterministic_debug_mode():
    return _state["deterministic_debug_mode"]


def compiled_with_cxx11_abi():
    return True


def is_vulkan_available():
    """PyTorch's Vulkan backend (not WebGPU's adapter, which may itself run on Vulkan)."""
    return False
