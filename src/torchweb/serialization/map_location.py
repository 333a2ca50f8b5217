"""map_location: which torchweb device each storage of a checkpoint lands on.

A checkpoint records a location per storage ("cpu", "cuda:0", "mps", ...). torchweb has two
devices, so:

    None              "cpu" -> cpu; any accelerator ("cuda:0", "mps", "webgpu") -> webgpu where
                      an adapter exists, else cpu
    "cpu", "webgpu", torchweb.device, "cuda:0" (-> webgpu), an int (-> webgpu)
                      every storage goes there
    dict              {"cuda:0": "cpu"}: a storage whose location is a key goes to its value;
                      the others follow the None rule
    callable          f(storage, location) as PyTorch calls it: returning None follows the None
                      rule; returning the storage it was given keeps it on cpu (PyTorch's
                      `lambda storage, loc: storage` idiom), unless .cuda()/.to(device) was
                      called on it; returning a device or a string sends it there

torchweb's cpu device runs on numpy; where numpy is missing (Pyodide without it) a storage
bound for "cpu" lands on webgpu instead.
"""

from .._device import CPU, WEBGPU, device as _device
from ..backends.webgpu import is_available


def _numpy_present():
    try:
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def _accelerator():
    return WEBGPU if is_available() else CPU


def coerce(d):
    """A device from what a user or a file names (PyTorch's accelerators become webgpu)."""
    if isinstance(d, _device):
        dev = d
    elif isinstance(d, int) and not isinstance(d, bool):
        return _accelerator()
    elif isinstance(d, str):
        kind = d.split(":")[0]
        if kind in ("cuda", "mps", "xpu", "hip", "xla", "meta", "gpu", "webgpu"):
            return _accelerator() if kind != "webgpu" else WEBGPU
        dev = _device(d)
    else:
        raise TypeError(f"map_location must be None, a string, a torch.device, a dict or a callable, "
                        f"got {type(d).__name__}")
    if dev.type == "cpu" and not _numpy_present():
        return WEBGPU
    return dev


def _default(location):
    if location.split(":")[0] == "cpu":
        return coerce("cpu")
    return _accelerator()


class StorageStub:
    """What a map_location callable receives as the storage: .cpu(), .cuda(), .to(device)
    choose where it goes; returning it keeps the choice."""

    def __init__(self, location, numel):
        self.location, self._numel = location, numel
        self.device = CPU

    def size(self):
        return self._numel

    def cpu(self):
        self.device = CPU
        return self

    def cuda(self, device=None, non_blocking=False):
        self.device = _accelerator()
        return self

    def to(self, device=None, *args, **kwargs):
        self.device = coerce(device) if device is not None else self.device
        return self


def resolver(map_location):
    """A function location -> torchweb device for this map_location."""
    if map_location is None:
        return _default
    if isinstance(map_location, (str, _device, int)):
        dev = coerce(map_location)
        return lambda location: dev
    if isinstance(map_location, dict):
        table = dict(map_location)

        def by_table(location):
            return coerce(table[location]) if location in table else _default(location)
        return by_table
    if callable(map_location):
        def by_call(location):
            stub = StorageStub(location, None)
            out = map_location(stub, location)
            if out is None:
                return _default(location)
            if out is stub:
                return coerce(stub.device)
            if isinstance(out, StorageStub):
                return coerce(out.device)
            return coerce(out)
        return by_call
    raise TypeError(f"map_location must be None, a string, a torch.device, a dict or a callable, "
                    f"got {type(map_location).__name__}")
