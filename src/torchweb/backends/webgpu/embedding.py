"""The webgpu device's embedding primitives (kernels/embedding.py): a row gather and the sum
of gradient rows per index."""

from .kernels import embedding as emb_kernel
from .runtime import get_runtime


def embedding(out, weight, idx):
    """out[i, :] = weight[idx[i], :]; an index out of range raises IndexError at the next readback."""
    emb_kernel.forward(get_runtime(), out, weight, idx)


def embedding_backward(grad_weight, grad, idx, padding_idx):
    """grad_weight (float32, zeroed, contiguous) += grad's rows at idx, padding_idx skipped."""
    emb_kernel.backward(get_runtime(), grad_weight, grad, idx, padding_idx)
