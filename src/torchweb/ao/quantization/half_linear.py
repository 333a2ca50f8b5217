"""The linear layers quantize_(model, bfloat16_weight_only()) and quantize_(model,
float16_weight_only()) put in place of an nn.Linear: the weight held as bfloat16 or float16
packed two to a 32-bit word (half float32's memory, whatever the adapter: a bfloat16 tensor,
and a float16 one without 'shader-f16', is held in f32 words, _dtype.py), unpacked inside the
matmul kernel and computed in float32, activations in their own dtype. Their state_dict holds
`weight` (the packed int32 words, (out, ceil(in / 2)), the bytes of PyTorch's half matrix) and
`bias`. The two differ only in the half format (`packed_format`)."""

from ...ops.quantized_linear import bfloat16_weight_linear, float16_weight_linear, pack_half
from ... import _dtype as D
from .packed_linear import PackedLinear


class HalfWeightOnlyLinear(PackedLinear):
    per_word = 2
    _op = None        # the format's linear op

    @property
    def weight_format(self):
        return f"{self.packed_format} packed"

    def _pack(self, weight):   # (rounded as .half() / .bfloat16() do)
        self.weight = pack_half(weight.to(getattr(D, self.packed_format)))

    def linear(self, input, weight, scale, bias):
        return self._op(input, weight, bias, self.in_features)


class BFloat16WeightOnlyLinear(HalfWeightOnlyLinear):
    __module__ = "torchweb.ao.quantization"
    packed_format = "bfloat16"
    _op = staticmethod(bfloat16_weight_linear)


class Float16WeightOnlyLinear(HalfWeightOnlyLinear):
    __module__ = "torchweb.ao.quantization"
    packed_format = "float16"
    _op = staticmethod(float16_weight_linear)
