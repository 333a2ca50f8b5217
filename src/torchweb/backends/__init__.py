"""Device backends: one module per device type (cpu.py on numpy, webgpu/backend.py on WebGPU),
each implementing the primitives and capability flags of backends/base.py's `Backend`, which
ops/ (and ops/lowering.py) call; a backend never calls up into ops. Fusion (torchweb/lazy) sits above them: it hands a backend
the nodes to write (run_fused), and a backend asks it to realize a pending storage before
binding it through the hooks of backends/pending.py, which the lazy layer installs."""


_loaded = {}


def backend_for(device_type):
    """The backend module of a device type (imported on first use: the webgpu one needs a
    driver, the cpu one numpy). Cached: every op asks."""
    b = _loaded.get(device_type)
    if b is None:
        if device_type == "webgpu":
            from .webgpu import backend as b  # deferred: driver choice (the webgpu backend needs one)
        else:
            from . import cpu as b  # deferred: optional dependency (the cpu backend runs on numpy)
        _loaded[device_type] = b
    return b


from . import cuda, cudnn, mps  # noqa: F401,E402  (PyTorch's torch.backends.* flag modules)
