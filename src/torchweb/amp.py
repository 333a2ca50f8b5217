"""torch.amp: autocast and GradScaler, as scripts use them.

autocast: torchweb does not yet run regions in reduced precision; the region runs in the
tensors' own dtypes (float32 stays float32: more accurate than PyTorch's autocast, never wrong).
GradScaler: PyTorch's dynamic loss scaling (scale, unscale_, step skipping non-finite
gradients, update), useful with float16 parameters."""

import warnings
from . import _dtype
from .autograd import grad_mode


class autocast:
    def __init__(self, device_type="webgpu", dtype=None, enabled=True, cache_enabled=None):
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self):
        if self.enabled and not _warned[0]:
            _warned[0] = True
            warnings.warn("torchweb.amp.autocast: mixed precision is not implemented yet; the "
                          "region runs in the tensors' own dtypes", UserWarning, stacklevel=2)
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


_warned = [False]


def is_autocast_available(device_type):
    return False


class GradScaler:
    def __init__(self, device="webgpu", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._found_inf = {}   # id(optimizer) -> bool, for this iteration
        self._unscaled = set()

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def _params(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield p

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        found = False
        inv = 1.0 / self._scale
        with grad_mode.no_grad():
            for p in self._params(optimizer):
                p.grad.mul_(inv)
                if not found and not p.grad.isfinite().all().item():
                    found = True
        self._found_inf[id(optimizer)] = found
        self._unscaled.add(id(optimizer))

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf.get(id(optimizer)):
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf.clear()
        self._unscaled.clear()

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]


# -- torch.* autocast state (PyTorch's per-device switches, which libraries query) -------------
# autocast regions run in the tensors' own dtypes here (see above), so autocast is never on;
# the dtypes set are remembered and reported back.
_autocast_dtypes = {"cpu": "bfloat16", "cuda": "float16", "webgpu": "float16"}
_autocast_cache = [True]


def is_autocast_enabled(device_type=None):
    return False


def _dtype_of(device_type):
    name = _autocast_dtypes.get(device_type, "float16")
    return getattr(_dtype, name, None)


def get_autocast_dtype(device_type):
    return _dtype_of(device_type)


def set_autocast_dtype(device_type, dtype):
    _autocast_dtypes[device_type] = str(dtype).replace("torch.", "")


def set_autocast_enabled(device_type, enabled=None):
    """Accepted and without effect: autocast regions here keep the tensors' dtypes."""


def get_autocast_cpu_dtype():
    return _dtype_of("cpu")


def get_autocast_gpu_dtype():
    return _dtype_of("cuda")


def set_autocast_cpu_dtype(dtype):
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled():
    return False


def set_autocast_cpu_enabled(enabled):
    """Accepted and without effect (see set_autocast_enabled)."""


def is_autocast_cache_enabled():
    return _autocast_cache[0]


def set_autocast_cache_enabled(enabled):
    _autocast_cache[0] = bool(enabled)


def clear_autocast_cache():
    return None


def autocast_increment_nesting():
    return 1


def autocast_decrement_nesting():
    return 0
