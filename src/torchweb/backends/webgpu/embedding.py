"""The webgpu device's embedding primitives (kernels/embedding.py): a row gather and the sum
of gradient rows per index."""

from .kernels import embedding as emb_kernel
from ..limits import BindingTooLarge
from . import windows
from .runtime import get_runtime


def embedding(out, weight, idx):
    """out[i, :] = weight[idx[i], :]; an index out of range raises IndexError at the next readback.
    A table past the binding limit is gathered from one window of its rows at a time."""
    rt = get_runtime()
    try:
        emb_kernel.forward(rt, out, weight, idx)
    except BindingTooLarge as e:
        tag = rt.errors.tag("embedding")
        windows.split(e, windows.split_rows, lambda w, o, i, rows: emb_kernel.forward(rt, o, w, i, rows, tag),
                      rt.max_binding, weight, [out, idx], "rows")


def embedding_backward(grad_weight, grad, idx, padding_idx):
    """grad_weight (float32, zeroed, contiguous) += grad's rows at idx, padding_idx skipped
    (one window of grad_weight's rows at a time where it passes the binding limit)."""
    rt = get_runtime()
    try:
        emb_kernel.backward(rt, grad_weight, grad, idx, padding_idx)
    except BindingTooLarge as e:
        windows.split(e, windows.split_rows, lambda gw, g, i, rows: emb_kernel.backward(
            rt, gw, g, i, padding_idx, rows), rt.max_binding, grad_weight, [grad, idx], "rows")
