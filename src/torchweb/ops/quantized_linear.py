"""Weight-only int8: per-output-channel symmetric quantization of a linear layer's weight, and
the linear op that dequantizes inside the matmul (backends' packed_linear); and bfloat16 or
float16 weights packed two to a word, through the same kernels.

The int8 weight is held packed, 4 values per int32 word, little-endian (so the words' bytes are
the int8 matrix's bytes), each row zero-padded to whole words: an (out, ceil(in / 4)) int32
tensor, a quarter of float32's memory. Quantization follows torchao's int8_weight_only
(MappingType.SYMMETRIC, quant range [-128, 127]): scale = max|w| / 127.5 per row, at least
float32's eps, and q = clamp(round(w * (1 / scale)), -128, 127).
"""

from .. import _dtype as D
from .._creation import zeros
from ..autograd import grad_mode
from ..backends import backend_for
from .operands import empty
from .registry import define
from . import join as J, reduction as R, shape as S
from .elementwise import call

QUANT_MIN, QUANT_MAX = -128, 127
_EPS = 2.0 ** -23   # torch.finfo(torch.float32).eps, torchao's floor for a scale


def quantize_per_channel(weight):
    """(q, scale) for a float weight (out, in): q int32 (out, in) holding int8 values, scale
    (out,) in the weight's dtype, as torchao's int8_weight_only computes them."""
    w = weight.detach()
    amax = R.amax(call("abs", w), 1)
    scale = call("clamp_min", amax / ((QUANT_MAX - QUANT_MIN) / 2), _EPS).to(w.dtype)
    q = call("clamp", call("round", w * S.unsqueeze(call("reciprocal", scale), 1)), QUANT_MIN, QUANT_MAX)
    return q.to(D.int32), scale


def pack_int8(q):
    """q (out, in) int32 holding int8 values -> (out, ceil(in / 4)) int32, 4 bytes a word."""
    out_f, in_f = q.shape
    pad = -in_f % 4
    if pad:
        q = J.cat([q, zeros((out_f, pad), dtype=D.int32, device=q.device)], 1)
    b = S.reshape(q, (out_f, (in_f + pad) // 4, 4))
    low = call("where", b < 0, b + 256, b)   # bytes 0-2 as unsigned; byte 3 keeps its sign
    # (every partial sum stays in int32's range: the word is its two's complement value)
    return (S.select(low, 2, 0) + S.select(low, 2, 1) * 256 + S.select(low, 2, 2) * 65536
            + S.select(b, 2, 3) * 16777216).contiguous()


def unpack_int8(packed, in_features):
    """The int8 values (as int32, (out, in_features)) of a packed weight: the inverse of pack_int8."""
    words = S.unsqueeze(packed, 2)
    shifts = [0, 8, 16, 24]
    parts = [call("bitwise_right_shift", call("bitwise_left_shift", words, 24 - s), 24) for s in shifts]
    q = S.reshape(J.cat(parts, 2), (packed.shape[0], packed.shape[1] * 4))
    return S.narrow(q, 1, 0, in_features).contiguous()


_PER_WORD = {"int8": 4, "bfloat16": 2, "float16": 2}   # the packing formats, values a word


def pack_half(weight):
    """A bfloat16 or float16 weight (out, in) -> (out, ceil(in / 2)) int32, two values a word
    (the low half the even column): the bytes of PyTorch's matrix of that dtype, half float32's
    memory."""
    if weight.dtype not in (D.bfloat16, D.float16):
        raise RuntimeError(f"pack_half: expected a bfloat16 or float16 weight, got {weight.dtype}")
    w = weight.detach().contiguous()
    out = empty((w.shape[0], -(-w.shape[1] // 2)), D.int32, w.device)
    backend_for(w.device.type).pack_half(out, w, w.dtype.name)
    return out


def _packed_linear(name, input, packed, scale, bias, in_features, fmt):
    out_f, words = packed.shape
    per = _PER_WORD[fmt]
    k = in_features if in_features is not None else words * per
    if input.dtype not in (D.float32, D.float16, D.bfloat16):
        raise RuntimeError(f"{name}: input must be float32, float16 or bfloat16, got {input.dtype}")
    if packed.dtype is not D.int32 or not (words * per - per < k <= words * per):
        raise RuntimeError(f"{name}: weight_packed must be int32 (out, ceil(in / {per})), got "
                           f"{packed.dtype} {list(packed.shape)} for in_features={k}")
    if input.shape[-1] != k:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.numel() // max(input.shape[-1], 1)}"
                           f"x{input.shape[-1]} and {k}x{out_f})")
    if (scale is not None and scale.shape != (out_f,)) or (bias is not None and bias.shape != (out_f,)):
        raise RuntimeError(f"{name}: scale and bias must have shape ({out_f},)")
    if grad_mode.is_grad_enabled() and input.requires_grad:
        raise NotImplementedError(f"{name} has no backward: layers with packed weights are for inference "
                                  "(run them under torch.no_grad(), or keep the float layer to train)")
    lead = input.shape[:-1]
    x = S.reshape(input, (-1, k)).contiguous()
    out = empty((x.shape[0], out_f), input.dtype, input.device)
    backend_for(input.device.type).packed_linear(out, x, packed.contiguous(), None if scale is None else scale.contiguous(),
                                                 None if bias is None else bias.contiguous(), fmt)
    return S.reshape(out, tuple(lead) + (out_f,))


@define("int8_weight_linear", "linalg", torch=False, method=False, differentiable=False,
        dtypes="floating",
        doc="int8_weight_linear(input, weight_packed, scale, bias=None, in_features=None) -> Tensor\n\n"
            "input @ (q * scale[:, None]).T + bias with q the int8 weight packed 4 per int32 word "
            "(ops/quantized_linear.py), dequantized inside the matmul and computed in float32; what "
            "torchweb.ao.quantization's int8_weight_only layers run. No gradient.")
def int8_weight_linear(input, weight_packed, scale, bias=None, in_features=None):
    return _packed_linear("int8_weight_linear", input, weight_packed, scale, bias, in_features, "int8")


def _define_half(fmt, why):
    """The linear op of a half format's packed weights (bfloat16_weight_linear,
    float16_weight_linear): one definition, the format its parameter."""
    name = f"{fmt}_weight_linear"

    @define(name, "linalg", torch=False, method=False, differentiable=False, dtypes="floating",
            doc=f"{name}(input, weight_packed, bias=None, in_features=None) -> Tensor\n\n"
                f"input @ w.T + bias with w a {fmt} weight packed 2 per int32 word (half float32's "
                f"memory), unpacked inside the matmul{why} and computed in float32; what "
                f"torchweb.ao.quantization's {fmt}_weight_only layers run. No gradient.")
    def half_weight_linear(input, weight_packed, bias=None, in_features=None):
        return _packed_linear(name, input, weight_packed, None, bias, in_features, fmt)
    return half_weight_linear


bfloat16_weight_linear = _define_half("bfloat16", "")
float16_weight_linear = _define_half("float16", " (WGSL's core unpack2x16float: no shader-f16 needed)")
