"""torch.cuda as seen from a web page.

Plain torchweb has no CUDA device: is_available() is False, so scripts take their CPU
branch, and "cuda" is refused with a hint (use 'webgpu' or torch.accelerator).

Under `torchweb.install_torch_alias()` (unless `cuda=False`), "cuda" names the GPU torchweb
has, so `device = "cuda" if torch.cuda.is_available() else "cpu"` lands on the GPU: every
"cuda", "cuda:0" and torch.device("cuda") resolves to the webgpu device (whose tensors report
device.type 'webgpu' and is_cuda True), and the calls below answer
with the webgpu device's: synchronize, the memory counters, the generator, the name."""

from . import _device, webgpu
from ._errors import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)
from . import amp as _amp
from ._random import default_generator
from ._refused import refuse_the_rest
from .backends.webgpu import is_available as webgpu_available

_WHY = ("torchweb has no CUDA device: it runs on WebGPU. Use device 'webgpu' "
        "(or torch.accelerator.current_accelerator()), or let 'cuda' name the webgpu device "
        "with torchweb.install_torch_alias()")


def _on():
    """Whether "cuda" means the webgpu device now (the alias is installed with cuda=True)."""
    return _device.CUDA_IS_WEBGPU[0]


def _require():
    if not _on():
        raise RuntimeError(_WHY)
    if not is_available():
        raise RuntimeError("torch.cuda (the webgpu device): no WebGPU adapter is available")


def _check_index(device):
    if device is None or not _on():
        return
    d = device if isinstance(device, int) else _device.device(device).index
    if d not in (None, 0, -1):
        raise RuntimeError(f"Invalid device index {d}: torchweb has one GPU (cuda:0, the webgpu device)")


def is_available():
    if not _on():
        return False
    return webgpu_available()


def device_count():
    return 1 if is_available() else 0


def is_initialized():
    return is_available()


def init():
    _require()


def current_device():
    _require()
    return 0


def set_device(device):
    _require()
    _check_index(device)


def get_device_name(device=None):
    _require()
    _check_index(device)
    info = webgpu.adapter_info()
    return info.get("device") or info.get("description") or info.get("vendor") or "WebGPU adapter"


def is_bf16_supported(including_emulation=True):
    return False   # WebGPU has no bfloat16


def synchronize(device=None):
    _require()
    _check_index(device)
    webgpu.synchronize()


def memory_allocated(device=None):
    if not _on():
        return 0   # no CUDA memory (as PyTorch answers for an uninitialized device)
    return webgpu.memory_allocated()


def max_memory_allocated(device=None):
    if not _on():
        return 0
    return webgpu.max_memory_allocated()


def memory_reserved(device=None):
    if not _on():
        return 0
    return webgpu.memory_reserved()


def empty_cache():
    """Releases the webgpu device's pooled free buffers (under the alias); else nothing to do."""
    if _on() and is_available():
        webgpu.empty_cache()


def manual_seed(seed):
    """Seeds the webgpu device's generator under the alias (PyTorch seeds the CUDA one);
    without it there is no CUDA generator, and PyTorch does nothing either."""
    if _on():
        default_generator(_device.WEBGPU).manual_seed(seed)


manual_seed_all = manual_seed


def _amp_namespace():
    from types import SimpleNamespace
    return SimpleNamespace(GradScaler=_amp.GradScaler, autocast=_amp.autocast)


amp = _amp_namespace()  # torch.cuda.amp.GradScaler(enabled=False), as nanoGPT's train.py calls it


__getattr__ = refuse_the_rest(
    "torch.cuda", "CUDA streams, events, graphs and device properties have no WebGPU counterpart here")


from ._legacy_types import CUDA_TYPES as _LEGACY  # noqa: E402  (torch.cuda.FloatTensor, ...)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor, BoolTensor) = (_LEGACY[n] for n in _LEGACY)
