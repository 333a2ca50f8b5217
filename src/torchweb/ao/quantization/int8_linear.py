"""The linear layer quantize_(model, int8_weight_only()) puts in place of an nn.Linear: its
weight held as int8 (packed 4 per int32 word, ops/quantized_linear.py) with a float scale per
output channel, dequantized inside the matmul kernel. Its state_dict holds `weight` (the packed
int32 words, (out, ceil(in / 4))), `weight_scale` (out,) and `bias`."""

from ...autograd import grad_mode
from ...nn.modules.module import Module
from ...ops.quantized_linear import int8_weight_linear, pack_int8, quantize_per_channel, unpack_int8
from ... import _creation, _dtype as D


class Int8WeightOnlyLinear(Module):
    __module__ = "torchweb.ao.quantization"

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        dtype = dtype or D.get_default_dtype()
        self.register_buffer("weight", _creation.zeros((out_features, -(-in_features // 4)), dtype=D.int32,
                                                       device=device))
        self.register_buffer("weight_scale", _creation.ones((out_features,), dtype=dtype, device=device))
        if bias:
            from ...nn.parameter import Parameter
            self.bias = Parameter(_creation.zeros((out_features,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_float(cls, linear):
        """The quantized form of a Linear (its weight quantized per output channel)."""
        w = linear.weight
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, w.device, w.dtype)
        with grad_mode.no_grad():
            q, scale = quantize_per_channel(w)
            layer.weight = pack_int8(q)
            layer.weight_scale = scale
            if linear.bias is not None:
                layer.bias = linear.bias
        return layer

    def int8_weight(self):
        """The int8 values of the weight, as an int32 tensor (out_features, in_features)."""
        return unpack_int8(self.weight, self.in_features)

    def dequantized_weight(self):
        """weight as floats: int8 values times their row's scale (what the kernel multiplies by)."""
        return self.int8_weight().to(self.weight_scale.dtype) * self.weight_scale.unsqueeze(1)

    def forward(self, input):
        return int8_weight_linear(input, self.weight, self.weight_scale, self.bias, self.in_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, weight=int8 per-channel")
