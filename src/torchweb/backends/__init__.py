"""Device backends. Each implements the same primitives, which ops/ (and ops/lowering.py) call;
a backend never calls up into ops:

    empty_storage(numel, dtype)                storage_from_values(values, dtype)
    read_values(t) / read_values_async(t)      elementwise(op, out, operands, classes, ...)
    reduce(kind, out, inp, nred, acc_cls, ...) matmul(out, a, b, acc_cls)
    random(kind, out, seed, call, a, b)
    run_fused(outs, nodes, one_kernel, patched): write pending storages with the values of
        lazy Nodes of one shape (torchweb/lazy, above the backends, hands them over;
        GRID_LIMITED: whether it must check an expression's size at the op; one_kernel and
        patched: a fusing scope's kernel, one dispatch whose scalars a capture's replay
        patches); backends/pending.py: how a backend asks it to realize a storage before
        binding it
    refuse_capture(reason): the call torchweb.compile records runs eagerly instead
    softmax_fits(row, rows) / softmax(out, inp, log): a fused softmax over inp's last dim
    SPLIT_REDUCTIONS, MAX_MATMUL_K: what ops/lowering.py should split for this backend
"""


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
