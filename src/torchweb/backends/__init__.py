"""Device backends. Each implements the same primitives, which ops/ calls:

    empty_storage(numel, dtype)                storage_from_values(values, dtype)
    read_values(t) / read_values_async(t)      elementwise(op, out, operands, classes, ...)
    reduce(kind, out, inp, nred, acc_cls)      matmul(out, a, b, acc_cls)
    random(kind, out, seed, call, a, b)
    softmax(out, inp, log): a fused softmax over inp's last dim, or False to let ops/ compose it
"""


def backend_for(device_type):
    if device_type == "webgpu":
        from .webgpu import backend
        return backend
    from . import cpu
    return cpu
