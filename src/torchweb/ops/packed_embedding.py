"""A lookup in a packed weight: the rows of a weight held packed in int32 words (int8 with a
scale per row, bfloat16, float16) at the given indices, unpacked to floats by one kernel (backends'
packed_embedding), never the whole table. What a tied embedding reads after quantize_ packed its
lm_head (ao/quantization/packed_embedding.py), from the head's own words."""

from .. import _dtype as D
from ..backends import backend_for
from .composite.embedding import _check_indices
from .operands import empty
from .registry import define
from . import shape as S

# packing format: (values a 32-bit word holds, whether it has a scale per row)
FORMATS = {"int8": (4, True), "bfloat16": (2, False), "float16": (2, False)}


@define("packed_embedding", "indexing", torch=False, method=False, differentiable=False, dtypes=("int32", "int64"),
        doc="packed_embedding(input, weight_packed, scale, embedding_dim, format, dtype) -> Tensor\n\n"
            "The rows at input's indices of a weight packed in int32 words (format 'int8': 4 a word "
            "with a scale per row; 'bfloat16', 'float16': 2 a word, scale None), unpacked in one kernel: shape "
            "input.shape + (embedding_dim,) in dtype, equal to the dequantized weight's rows. What a "
            "tied embedding reads after quantize_ packed its lm_head. No gradient.")
def packed_embedding(input, weight_packed, scale, embedding_dim, format, dtype):
    if format not in FORMATS:
        raise ValueError(f"packed_embedding: format must be one of {', '.join(FORMATS)}, got {format!r}")
    per, scaled = FORMATS[format]
    _check_indices(input, "packed_embedding")
    num, words = weight_packed.shape
    if weight_packed.dtype is not D.int32 or not (words * per - per < embedding_dim <= words * per):
        raise RuntimeError(f"packed_embedding: weight_packed must be int32 (num, ceil(dim / {per})), got "
                           f"{weight_packed.dtype} {list(weight_packed.shape)} for embedding_dim={embedding_dim}")
    if scaled != (scale is not None) or (scale is not None and tuple(scale.shape) != (num,)):
        raise RuntimeError(f"packed_embedding: format {format!r} needs " +
                           (f"a scale of shape ({num},)" if scaled else "no scale"))
    if not dtype.is_floating_point:
        raise RuntimeError(f"packed_embedding: dtype must be floating, got {dtype}")
    idx = S.reshape(input, (-1,)).contiguous()
    out = empty((idx.shape[0], embedding_dim), dtype, weight_packed.device)
    backend_for(weight_packed.device.type).packed_embedding(
        out, weight_packed.contiguous(), None if scale is None else scale.contiguous(), idx, format)
    return S.reshape(out, tuple(input.shape) + (embedding_dim,))
