"""What the linear layers with packed weights share (int8_linear.py, half_linear.py): the
packed int32 `weight` buffer of (out, ceil(in / per_word)), the bias, and from_float's frame."""

from ...autograd import grad_mode
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from ... import _creation, _dtype as D


def is_conv1d(module):
    """Hugging Face's GPT-2 Conv1D (transformers' or torchweb.models'): a linear layer whose weight
    is stored (in_features, out_features). Known by name and layout, as both define the class."""
    return (type(module).__name__ == "Conv1D" and hasattr(module, "nf")
            and getattr(module, "weight", None) is not None and module.weight.dim() == 2)


class PackedLinear(Module):
    per_word = 1   # weights a 32-bit word holds
    packed_format = None   # how: "int8", "bfloat16" or "float16" (the backends' packed_linear fmt)

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        dtype = self.float_dtype = dtype or D.get_default_dtype()   # the float weight's dtype
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

    def weight_scale_or_none(self):
        return None

    def linear(self, input, weight, scale, bias):
        """input @ W.T + bias for packed rows weight (and their scales): the layer's matmul, also
        run on a gathered subset of its rows (a tied embedding's lookup, packed_embedding.py)."""
        raise NotImplementedError

    def forward(self, input):
        return self.linear(input, self.weight, self.weight_scale_or_none(), self.bias)

    @classmethod
    def from_float(cls, linear):
        """The packed form of an nn.Linear, or of a GPT-2 Conv1D (weight (in, out): packed as its
        transpose, so the layer computes the same x @ weight + bias); its bias is kept."""
        w = linear.weight
        if is_conv1d(linear):
            w = w.t()
        out_features, in_features = w.shape
        layer = cls(in_features, out_features, linear.bias is not None, w.device, w.dtype)
        with grad_mode.no_grad():
            layer._pack(w)
            if linear.bias is not None:
                layer.bias = linear.bias
        return layer

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, weight={self.weight_format}")
