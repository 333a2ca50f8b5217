"""torch.device and the default device."""

from .backends.webgpu import is_available

_KNOWN_TYPES = ("cpu", "webgpu")

# Whether "cuda" names the webgpu device: set by install_torch_alias() (cuda=True), see cuda.py
CUDA_IS_WEBGPU = [False]


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or torch.device, got {type.__class__.__name__}")
        name = type
        if ":" in name:
            name, _, idx = name.partition(":")
            if index is not None:
                raise ValueError(f"device string {type!r} already has an index")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}'") from None
        if name == "gpu" or (name == "cuda" and CUDA_IS_WEBGPU[0]):
            name = "webgpu"
        if name not in _KNOWN_TYPES:
            hint = " (torchweb runs on 'webgpu' or 'cpu')" if name in ("cuda", "mps", "xpu") else ""
            raise RuntimeError(f"Expected one of cpu, webgpu device type at start of device string: {type}{hint}")
        if index is not None and index != 0:
            raise RuntimeError(f"Invalid device index {index} for {name}: torchweb has one device of each type")
        self.type = name
        self.index = 0 if name == "webgpu" else index

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return isinstance(other, device) and self.type == other.type

    def __hash__(self):
        return hash(self.type)

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    # `with torch.device(d):` factories make tensors on d inside the block
    def __enter__(self):
        _entered.append(_default[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        _default[0] = _entered.pop()


CPU = device("cpu")
WEBGPU = device("webgpu")

_default = [None]
_entered = []   # (the defaults `with device:` blocks replaced)


def as_device(d):
    if d is None:
        return get_default_device()
    if isinstance(d, device):
        return d
    if isinstance(d, int):
        return WEBGPU
    d = device(d)
    # the shared instances where they mean the same: ops compare devices first by identity
    if d.type == "webgpu":
        return WEBGPU
    return CPU if d.index is None else d


def get_default_device():
    """The default device: set_default_device's, else webgpu where an adapter exists, else cpu."""
    if _default[0] is None:
        _default[0] = WEBGPU if is_available() else CPU
    return _default[0]


def set_default_device(device):
    _default[0] = None if device is None else as_device(device)
