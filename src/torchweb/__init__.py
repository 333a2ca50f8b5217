"""torchweb: PyTorch's API on WebGPU, in the browser (Pyodide) and in CPython (wgpu-py).

    import torchweb as torch
"""

__version__ = "0.1.0"

from ._dtype import (bool, uint8, int32, int64, float16, float32, half, float, int, long,
                     promote_types, get_default_dtype, set_default_dtype, dtype)
from ._dtype import _UnsupportedDtype
from ._device import device, get_default_device, set_default_device
from ._size import Size
from ._tensor import Tensor, is_tensor
from . import _tensor_methods
from ._creation import (tensor, as_tensor, from_numpy, zeros, ones, full, empty, zeros_like, ones_like,
                        full_like, empty_like, arange, linspace, logspace, eye, rand, randn, rand_like,
                        randn_like, randint, randint_like, randperm)
from ._random import manual_seed, seed, initial_seed, Generator
from ._functions import *  # noqa: F401,F403  (the torch.* op namespace)
from ._functions import sum, max, min, all, any, abs, pow, round  # shadow the builtins on purpose
from ._printing import set_printoptions
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from . import autograd, linalg, nn, special, webgpu
from .serialization import save, load  # noqa: E402  (torch.save / torch.load)
from . import safetensors, hub  # noqa: E402,F401
from . import accelerator, amp, cuda  # noqa: E402  (the device API unchanged scripts call)
from .amp import autocast  # noqa: E402
from ._torch_alias import install_torch_alias, uninstall_torch_alias  # noqa: E402
from ._settings import (set_float32_matmul_precision, get_float32_matmul_precision,  # noqa: E402
                        use_deterministic_algorithms, are_deterministic_algorithms_enabled,
                        is_deterministic_algorithms_warn_only_enabled, compile)
from . import optim  # noqa: E402  (torch.optim, torch.optim.lr_scheduler)
from . import compiler  # noqa: E402  (torch.compiler)
from . import utils  # noqa: E402  (torchweb.utils.data)

_tensor_methods.install()


def _assert(condition, message):
    """torch._assert: the assert statement as a function (model code written for tracing uses it)."""
    assert condition, message

# PyTorch names we refuse with an explanation rather than an AttributeError.
float64 = double = _UnsupportedDtype("float64")
bfloat16 = _UnsupportedDtype("bfloat16")
complex64 = _UnsupportedDtype("complex64")
int16 = short = _UnsupportedDtype("int16")
int8 = _UnsupportedDtype("int8")
