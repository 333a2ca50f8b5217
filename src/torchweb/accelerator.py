"""torch.accelerator: the device-agnostic API that PyTorch's examples use to pick their device.
torchweb's accelerator is the webgpu device."""

from ._device import WEBGPU, device as _device
from . import webgpu
from .backends.webgpu import is_available as webgpu_available


def is_available():
    return webgpu_available()


def current_accelerator(check_available=False):
    """The webgpu device (None when check_available and there is no adapter)."""
    if check_available and not is_available():
        return None
    return _device("webgpu")


def device_count():
    return 1 if is_available() else 0


def current_device_index():
    return 0


current_device_idx = current_device_index


def set_device_index(device):
    if device not in (0, None, "webgpu", "webgpu:0", WEBGPU, -1):
        raise ValueError(f"torchweb has one accelerator (webgpu:0), got {device}")


set_device_idx = set_device_index


def synchronize(device=None):
    """Waits for the webgpu device's queued work (and raises any error it flagged)."""
    webgpu.synchronize()
