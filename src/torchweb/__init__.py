"""torchweb: PyTorch's API on WebGPU, in the browser (Pyodide) and in CPython (wgpu-py).

    import torchweb as torch
"""

from .version import torchweb as __version__  # torchweb's own (the torch alias answers PyTorch's)

from ._dtype import (bool, uint8, int32, int64, float16, bfloat16, float32, half, float, int, long,
                     promote_types, get_default_dtype, set_default_dtype, dtype)
from ._dtype import _UnsupportedDtype
from ._device import device, get_default_device, set_default_device
from ._size import Size
from ._layout import (layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc,  # noqa: F401
                      jagged, memory_format, contiguous_format, channels_last, channels_last_3d,
                      preserve_format)
from ._tensor import Tensor, is_tensor
# autograd before the ops: the ops import its graph machinery, and its package (the user API:
# backward, grad, functional) imports creation functions, which import the ops
from . import autograd
from . import _tensor_methods
from ._creation import (tensor, as_tensor, from_numpy, zeros, ones, full, empty, zeros_like, ones_like,
                        full_like, empty_like, arange, linspace, logspace, eye, rand, randn, rand_like,
                        randn_like, randint, randint_like, randperm)
from . import _random as _random_module
from ._random import manual_seed, seed, initial_seed, Generator, get_rng_state, set_rng_state
from ._functions import *  # noqa: F401,F403  (the torch.* op namespace)
from ._functions import sum, max, min, all, any, abs, pow, round  # shadow the builtins on purpose
from ._printing import set_printoptions
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from . import linalg, nn, webgpu
from .serialization import save, load  # noqa: E402  (torch.save / torch.load)
from . import accelerator, amp, cuda  # noqa: E402  (the device API unchanged scripts call)
from .amp import autocast  # noqa: E402
from ._settings import (set_float32_matmul_precision, get_float32_matmul_precision,  # noqa: E402
                        use_deterministic_algorithms, are_deterministic_algorithms_enabled,
                        is_deterministic_algorithms_warn_only_enabled, compile,
                        get_num_threads, set_num_threads, get_num_interop_threads,
                        set_num_interop_threads, init_num_threads, set_warn_always,
                        is_warn_always_enabled, set_flush_denormal, set_deterministic_debug_mode,
                        get_deterministic_debug_mode, compiled_with_cxx11_abi, is_vulkan_available)
from ._control_flow import cond, while_loop  # noqa: E402
from ._errors import OutOfMemoryError, AcceleratorError  # noqa: E402
from ._introspection import typename, is_storage, is_complex, get_device_module, detach  # noqa: E402
from .autograd.grad_mode import is_inference_mode_enabled  # noqa: E402
from .amp import (GradScaler, is_autocast_enabled, get_autocast_dtype, set_autocast_dtype,  # noqa: E402
                  set_autocast_enabled, get_autocast_cpu_dtype, get_autocast_gpu_dtype,
                  set_autocast_cpu_dtype, set_autocast_gpu_dtype, is_autocast_cpu_enabled,
                  set_autocast_cpu_enabled, is_autocast_cache_enabled, set_autocast_cache_enabled,
                  clear_autocast_cache, autocast_increment_nesting, autocast_decrement_nesting)
from ._device import CPU as _CPU  # noqa: E402
default_generator = _random_module.default_generator(_CPU)   # (torch.default_generator: the cpu generator)
# Builds of PyTorch say what they were linked with; torchweb links nothing of the kind.
has_lapack = has_mkl = has_openmp = has_spectral = False
from . import compiler  # noqa: E402  (torch.compiler)
from . import version, torch_version  # noqa: E402,F401  (torch.version: cuda None, ...)
from . import jit, _dynamo, fx  # noqa: E402,F401  (eager meanings of torch.jit's, torch._dynamo's and torch.fx.wrap's calls)

_tensor_methods.install()
from ._sparse_coo import install as _install_sparse, sparse_coo_tensor  # noqa: E402
_install_sparse()   # (after every Tensor method exists: it refuses the rest on sparse tensors)
from ._tensor_info import get_device, is_inference, is_distributed  # noqa: E402,F401  (torch.* forms)
from ._tensor_storage import resize_as_  # noqa: E402,F401
from ._layout import legacy_contiguous_format  # noqa: E402,F401
conj_physical_ = Tensor.conj_physical_   # (the registry's in-place forms, as torch.* functions)
as_strided_ = Tensor.as_strided_

# PyTorch's constants (torch.inf is math.inf; torch.newaxis is None, as numpy's)
from math import inf, nan, pi, e  # noqa: E402
newaxis = None
from ._type_info import finfo, iinfo  # noqa: E402
from ._legacy_types import TYPES as _LEGACY, set_default_tensor_type  # noqa: E402  (torch.FloatTensor, ...)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor, BoolTensor) = (_LEGACY[n] for n in _LEGACY)


def _assert(condition, message):
    """torch._assert: the assert statement as a function (model code written for tracing uses it)."""
    assert condition, message

# PyTorch names we refuse with an explanation rather than an AttributeError.
from ._dtype import float64, double  # noqa: E402  (held on the host: torchweb/host64/)
from . import host64 as _host64  # noqa: E402
_host64.install(globals())
from . import _complex  # noqa: E402
_complex.install(globals())   # (complex64: float32 pairs; torch.complex, polar, view_as_real, ...)
from ._stft import stft, istft  # noqa: E402
Tensor.stft, Tensor.istft = stft, istft
from ._dtype import complex64, complex64 as cfloat  # noqa: E402  (float32 pairs: torchweb/_complex/)
complex128 = cdouble = _UnsupportedDtype("complex128")
int16 = short = _UnsupportedDtype("int16")
int8 = _UnsupportedDtype("int8")


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from ._refused import module_getattr as _module_getattr  # noqa: E402
_refused_getattr = _module_getattr("torch", "torchweb")


# Parts most scripts never touch load on first use (torchweb/_deferred.py): import time in Pyodide.
from ._deferred import deferred as _deferred  # noqa: E402
__getattr__, __dir__ = _deferred(__name__, globals(), {
    "optim": ".optim", "utils": ".utils", "fft": ".fft", "special": ".special", "sparse": ".sparse",
    "distributions": ".distributions", "func": ".func", "vmap": ".func:vmap",
    "safetensors": ".safetensors", "hub": ".hub",
    "install_torch_alias": "._torch_alias:install_torch_alias",
    "uninstall_torch_alias": "._torch_alias:uninstall_torch_alias",
}, fallback=_refused_getattr)
