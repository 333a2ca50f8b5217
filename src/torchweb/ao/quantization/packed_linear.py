"""What the linear layers with packed weights share (int8_linear.py, bfloat16_linear.py): the
packed int32 `weight` buffer of (out, ceil(in / per_word)), the bias, and from_float's frame."""

from ...autograd import grad_mode
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from ... import _creation, _dtype as D


class PackedLinear(Module):
    per_word = 1   # weights a 32-bit word holds

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        dtype = dtype or D.get_default_dtype()
        self.register_buffer("weight", _creation.zeros((out_features, -(-in_features // self.per_word)),
                                                       dtype=D.int32, device=device))
        self._init_extra(out_features, device, dtype)
        if bias:
            self.bias = Parameter(_creation.zeros((out_features,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)

    def _init_extra(self, out_features, device, dtype):
        """Buffers a format adds (int8's scales)."""

    def _pack(self, weight):
        """Set the packed buffers from a float weight (out, in)."""
        raise NotImplementedError

    @classmethod
    def from_float(cls, linear):
        """The packed form of a Linear (its weight packed, its bias kept)."""
        w = linear.weight
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, w.device, w.dtype)
        with grad_mode.no_grad():
            layer._pack(w)
            if linear.bias is not None:
                layer.bias = linear.bias
        return layer

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, weight={self.weight_format}")
