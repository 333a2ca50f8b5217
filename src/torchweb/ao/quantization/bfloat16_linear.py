"""The linear layer quantize_(model, bfloat16_weight_only()) puts in place of an nn.Linear: its
weight held as bfloat16 packed two to a 32-bit word (half float32's memory; a bfloat16 tensor
is held in float32 words, _dtype.py), unpacked inside the matmul kernel, activations in their
own dtype. Its state_dict holds `weight` (the packed int32 words, (out, ceil(in / 2)), the
bytes of PyTorch's bfloat16 matrix) and `bias`."""

from ...autograd import grad_mode
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from ...ops.quantized_linear import bfloat16_weight_linear, pack_bfloat16
from ... import _creation, _dtype as D


class BFloat16WeightOnlyLinear(Module):
    __module__ = "torchweb.ao.quantization"

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight", _creation.zeros((out_features, -(-in_features // 2)), dtype=D.int32,
                                                       device=device))
        if bias:
            self.bias = Parameter(_creation.zeros((out_features,), dtype=dtype or D.get_default_dtype(), device=device))
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_float(cls, linear):
        """The packed form of a Linear (its weight rounded to bfloat16, as .bfloat16() does)."""
        w = linear.weight
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, w.device, w.dtype)
        with grad_mode.no_grad():
            layer.weight = pack_bfloat16(w.to(D.bfloat16))
            if linear.bias is not None:
                layer.bias = linear.bias
        return layer

    def forward(self, input):
        return bfloat16_weight_linear(input, self.weight, self.bias, self.in_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, weight=bfloat16 packed")
