"""torch.cuda as seen from a web page: no CUDA device. Scripts that test
`torch.cuda.is_available()` take their CPU branch; use torch.accelerator or 'webgpu' for the GPU."""

_WHY = ("torchweb has no CUDA device: it runs on WebGPU. Use device 'webgpu' "
        "(or torch.accelerator.current_accelerator())")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """No CUDA generator to seed (PyTorch does nothing either when CUDA is absent)."""


manual_seed_all = manual_seed


def empty_cache():
    """Nothing to release: there is no CUDA caching allocator."""


def current_device():
    raise RuntimeError(_WHY)


def get_device_name(device=None):
    raise RuntimeError(_WHY)


def set_device(device):
    raise RuntimeError(_WHY)


def synchronize(device=None):
    raise RuntimeError(_WHY)


def _amp_namespace():
    from types import SimpleNamespace
    from . import amp as _amp
    return SimpleNamespace(GradScaler=_amp.GradScaler, autocast=_amp.autocast)


amp = _amp_namespace()  # torch.cuda.amp.GradScaler(enabled=False), as nanoGPT's train.py calls it


from ._legacy_types import CUDA_TYPES as _LEGACY  # noqa: E402  (torch.cuda.FloatTensor, ...)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor, BoolTensor) = (_LEGACY[n] for n in _LEGACY)
