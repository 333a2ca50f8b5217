"""torch.backends.cuda flags that scripts set (matmul.allow_tf32, ...): accepted, without effect
(torchweb's matmuls accumulate in float32)."""

import contextlib
from types import SimpleNamespace

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                         allow_bf16_reduced_precision_reduction=True)


def is_built():
    return False


def flash_sdp_enabled():
    return True


def enable_flash_sdp(enabled):
    """torchweb's scaled_dot_product_attention always uses its tiled kernel where it fits."""


enable_mem_efficient_sdp = enable_math_sdp = enable_cudnn_sdp = enable_flash_sdp



@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """PyTorch's older form of torch.nn.attention.sdpa_kernel: accepted, torchweb picks the kernel."""
    yield
