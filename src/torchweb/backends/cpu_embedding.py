"""The cpu device's embedding primitives on numpy: a row gather and the sum of gradient rows
per index (the same contract as backends/webgpu/embedding.py)."""

from .cpu_arrays import np, view


def embedding(out, weight, idx):
    """out[i, :] = weight[idx[i], :]; IndexError for an index out of range, as PyTorch."""
    n = np()
    i = view(idx).astype(n.int64)
    if i.size and (i.min() < 0 or i.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    n.copyto(view(out), view(weight)[i].reshape(out.shape), casting="unsafe")


def embedding_backward(grad_weight, grad, idx, padding_idx):
    """grad_weight (float32, zeroed, contiguous) += grad's rows at idx, padding_idx skipped."""
    n = np()
    i = view(idx).astype(n.int64)
    g = view(grad).astype(n.float32).reshape(len(i), -1)
    keep = (i >= 0) & (i < grad_weight.shape[0]) & (i != padding_idx)
    gw = view(grad_weight)
    n.add.at(gw, i[keep], g[keep])
