"""The linear layer quantize_(model, bfloat16_weight_only()) puts in place of an nn.Linear: its
weight held as bfloat16 packed two to a 32-bit word (half float32's memory; a bfloat16 tensor
is held in float32 words, _dtype.py), unpacked inside the matmul kernel, activations in their
own dtype. Its state_dict holds `weight` (the packed int32 words, (out, ceil(in / 2)), the
bytes of PyTorch's bfloat16 matrix) and `bias`."""

from ...ops.quantized_linear import bfloat16_weight_linear, pack_bfloat16
from ... import _dtype as D
from .packed_linear import PackedLinear


class BFloat16WeightOnlyLinear(PackedLinear):
    __module__ = "torchweb.ao.quantization"
    per_word = 2
    weight_format = "bfloat16 packed"

    def _pack(self, weight):
        self.weight = pack_bfloat16(weight.to(D.bfloat16))   # (rounded as .bfloat16() does)

    def linear(self, input, weight, scale, bias):
        return bfloat16_weight_linear(input, weight, bias, self.in_features)
