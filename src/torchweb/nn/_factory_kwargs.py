"""nn.factory_kwargs: the device/dtype/memory_format keyword arguments of a module constructor,
canonicalized for factory functions (PyTorch's torch/nn/__init__.py)."""


def factory_kwargs(kwargs):
    """A dict of the factory keyword arguments in kwargs (device, dtype, memory_format, and those
    of a nested factory_kwargs dict); TypeError for any other key or one given twice."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
