"""The embedding of a model whose lm_head is tied to it (GPT-2, Llama with tied embeddings), once
quantize_ has packed that lm_head: it reads the same packed words (and scales) as the head, so
the model keeps one copy of the vocabulary matrix, not a float32 embedding beside a packed head.

A lookup gathers the tokens' packed rows and unpacks them in one kernel (ops/packed_embedding.py):
the values are exactly the dequantized weights (int8 * scale, or the bfloat16 or float16 values)
in the layer's dtype."""

from ...nn.modules.module import Module
from ...ops.packed_embedding import packed_embedding
from ... import _creation


class PackedEmbedding(Module):
    __module__ = "torchweb.ao.quantization"

    def __init__(self, head):
        super().__init__()
        self.num_embeddings, self.embedding_dim = head.out_features, head.in_features
        self._head = [head]               # (a list: not a submodule, its keys stay the head's)
        self.format = head.packed_format  # (ops/packed_embedding.py FORMATS)
        self.dtype = head.float_dtype
        self.register_buffer("weight", head.weight)
        scale = head.weight_scale_or_none()
        if scale is not None:
            self.register_buffer("weight_scale", scale)

    def _apply(self, fn, recurse=True):
        # .float(), .half(), .to(dtype) give the rows that dtype, as they would an Embedding's weight
        self.dtype = fn(_creation.zeros((0,), dtype=self.dtype, device=self.weight.device)).dtype
        return super()._apply(fn, recurse)

    def forward(self, input):
        return packed_embedding(input, self.weight, getattr(self, "weight_scale", None), self.embedding_dim,
                                self.format, self.dtype)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, tied to a {self._head[0].weight_format} head"
