"""The linear layer quantize_(model, int8_weight_only()) puts in place of an nn.Linear: its
weight held as int8 (packed 4 per int32 word, ops/quantized_linear.py) with a float scale per
output channel, dequantized inside the matmul kernel. Its state_dict holds `weight` (the packed
int32 words, (out, ceil(in / 4))), `weight_scale` (out,) and `bias`."""

from ...ops.quantized_linear import int8_weight_linear, pack_int8, quantize_per_channel, unpack_int8
from ... import _creation
from .packed_linear import PackedLinear


class Int8WeightOnlyLinear(PackedLinear):
    __module__ = "torchweb.ao.quantization"
    per_word = 4
    packed_format = "int8"
    weight_format = "int8 per-channel"

    def _init_extra(self, out_features, device, dtype):
        self.register_buffer("weight_scale", _creation.ones((out_features,), dtype=dtype, device=device))

    def _pack(self, weight):
        q, scale = quantize_per_channel(weight)
        self.weight = pack_int8(q)
        self.weight_scale = scale

    def int8_weight(self):
        """The int8 values of the weight, as an int32 tensor (out_features, in_features)."""
        return unpack_int8(self.weight, self.in_features)

    def dequantized_weight(self):
        """weight as floats: int8 values times their row's scale (what the kernel multiplies by)."""
        return self.int8_weight().to(self.weight_scale.dtype) * self.weight_scale.unsqueeze(1)

    def weight_scale_or_none(self):
        return self.weight_scale

    def linear(self, input, weight, scale, bias):
        return int8_weight_linear(input, weight, scale, bias, self.in_features)
