"""The webgpu device's fused attention primitives (kernels/attention.py). ops/attention.py asks
attention_fits first and composes softmax(q @ k^T * scale + mask) @ v where it says no (and on
backends without these functions, such as the cpu device)."""

from .kernels import attention as _attn
from .kernels import attention_flash as _flash
from .runtime import get_runtime


# Up to this many scores (batch x L x S, float32) the composite softmax(q @ k^T) @ v is taken:
# its batched matmuls beat the fused kernels by about 3x there (NVIDIA H100, B16 x 6 heads,
# T 256: bench/kernel_profile.py), and the score matrix (32 MiB at most) is affordable. Past it,
# the fused kernels keep memory at O(L) per query block.
COMPOSITE_MAX_SCORES = 8 << 20
# (Decoding, a query a sequence against a KV cache, stays composite too: the fused forward makes
# a workgroup per head that streams the keys alone, 0.19 ms a layer for GPT-2 124M on an H200,
# where the composite's seven small dispatches take about a third of that.)


# Past COMPOSITE_MAX_SCORES, the register-tiled kernels (kernels/attention_flash.py: float32, no
# mask, head dims up to 64) where they fit, 5-11x faster than kernels/attention.py's on an H200
# (bench/results/gpu-nvidia-h200-attention-2026-11-27-session31.json); False: those only.
FLASH = True


def attention_fits(L, S, E, Ev, batch=1):
    """Whether the fused kernels should run these sizes: head dims up to 128, loops within
    lavapipe's, and more scores than the composite handles better (COMPOSITE_MAX_SCORES)."""
    return _attn.fits(L, S, E, Ev) and batch * L * S > COMPOSITE_MAX_SCORES


def _use_flash(spec, q, k, v):
    return FLASH and _flash.fits(q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1],
                                 spec.mask is not None, q.dtype.name)


def attention_forward(spec, out, lse, q, k, v):
    """out [*B, L, Ev] (contiguous) and lse [*B, L] (float32, contiguous) from q [*B, L, E],
    k [*B, S, E], v [*B, S, Ev] and spec (a backends/plans.py AttentionSpec): strided views with
    the batch dims broadcast (stride 0) already."""
    if _use_flash(spec, q, k, v):
        _flash.forward(get_runtime(), out, lse, q, k, v, spec.causal, spec.scale)
    else:
        _attn.forward(get_runtime(), out, lse, q, k, v, spec.mask, spec.causal, spec.scale)


def attention_backward(spec, dq, dkv, q, k, v, dout, ld):
    """dq [*B, L, E] and dkv (dk [*B, S, E] then dv [*B, S, Ev] in one contiguous buffer) from
    dout (contiguous [*B, L, Ev]) and ld (float32 [2, NB * L]: the forward's lse, then
    D = rowsum(dout * out))."""
    if _use_flash(spec, q, k, v):
        _flash.backward(get_runtime(), dq, dkv, q, k, v, dout, ld, spec.causal, spec.scale)
    else:
        _attn.backward(get_runtime(), dq, dkv, q, k, v, spec.mask, dout, ld, spec.causal, spec.scale)
