"""The embedding of a model whose lm_head is tied to it (GPT-2, Llama with tied embeddings), once
quantize_ has packed that lm_head: it reads the same packed words (and scales) as the head, so
the model keeps one copy of the vocabulary matrix, not a float32 embedding beside a packed head.

A lookup gathers the tokens' packed rows and unpacks them with the head's own kernel, as
identity @ rows.T: every output is one weight times 1.0 plus zeros, so the values are exactly
the dequantized weights (int8 * scale, or the bfloat16 values) in the layer's dtype."""

from ...nn.modules.module import Module
from ... import _creation


class PackedEmbedding(Module):
    __module__ = "torchweb.ao.quantization"

    def __init__(self, head):
        super().__init__()
        self.num_embeddings, self.embedding_dim = head.out_features, head.in_features
        self._head = [head]               # (a list: not a submodule, its keys stay the head's)
        self.register_buffer("weight", head.weight)
        scale = head.weight_scale_or_none()
        if scale is not None:
            self.register_buffer("weight_scale", scale)
        # the identity the rows are multiplied by (embedding_dim^2 floats: 2.4 MB for GPT-2's 768)
        self.register_buffer("eye", _creation.eye(self.embedding_dim, dtype=head.float_dtype, device=head.weight.device),
                             persistent=False)

    def forward(self, input):
        flat = input.reshape(-1)
        rows = self.weight.index_select(0, flat)
        scale = getattr(self, "weight_scale", None)
        scale = None if scale is None else scale.index_select(0, flat)
        out = self._head[0].linear(self.eye, rows, scale, None)        # (embedding_dim, tokens)
        return out.t().reshape(*input.shape, self.embedding_dim)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, tied to a {self._head[0].weight_format} head"
