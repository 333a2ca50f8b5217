"""layer_norm with PyTorch's own backward (native_layer_norm_backward's formula) instead of the
gradient of its composite of means.

The forward computes the mean and 1/std as the composite does (two row means) and saves them;
the backward is

    gw = g * weight,  ds = sum(gw * x),  db = sum(gw)           (sums over the normalized dims)
    b = (db * mean - ds) * rstd^3 / N,  c = -b * mean - db * rstd / N
    dx = rstd * gw + b * x + c
    dweight = sum(g * xhat),  dbias = sum(g)                   (sums over the other dims)

two row reductions, two column ones and fused elementwise kernels: with the forward, five
dispatches fewer per layer norm than the composite and its gradient (a small GPT's eager step:
234 -> 209; a transformer's step runs two layer norms a block). Where the backend has layer norm
kernels (webgpu, contiguous float32), the forward and dx are one dispatch each (ops/lowering.py's
fused_layer_norm), and the weight gradient's terms g * xhat come from the same pass.
"""

import math

from ...autograd import grad_mode
from ...autograd.function import Function
from ..elementwise import call
from .. import lowering, reduction as R
from . import affine


class LayerNorm(Function):
    _backward_name = "NativeLayerNormBackward0"
    _double_backward = True   # (with create_graph, mean and rstd computed again from x)

    @staticmethod
    def forward(ctx, x, weight, bias, dims, eps):
        # (grad mode is off here: the ops below record no graph). The mean, then the mean of
        # squared deviations, as the composite did: var_mean's one kernel rounds differently,
        # and through this backward a BERT's embedding gradient moved by 7e-4 of itself
        # (x - mean written out at each use: a pending value read twice is computed once
        # into a buffer, one kernel more than recomputing it inside each consumer's)
        fused = lowering.fused_layer_norm(x, weight, bias, dims, eps)
        if fused is not None:
            y, mean, rstd = fused
        else:
            mean = R.mean(x, dims, keepdim=True)
            rstd = call("rsqrt", R.mean((x - mean) * (x - mean), dims, keepdim=True) + eps)
            y = affine((x - mean) * rstd, weight, bias)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.dims = dims
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, rstd = ctx.saved_tensors
        dims = ctx.dims
        graph = grad_mode._state["enabled"]
        if graph and x.requires_grad:
            # create_graph: the saved statistics carry no graph; as functions of x they do
            mean = R.mean(x, dims, keepdim=True)
            rstd = call("rsqrt", R.mean((x - mean) * (x - mean), dims, keepdim=True) + ctx.eps)
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        dx = dw = db = gx = None
        if need_x and not graph:
            fused = lowering.fused_layer_norm_backward(g, x, weight, mean, rstd, dims, need_w)
            if fused is not None:
                dx, gx = fused   # (gx = g * xhat from the same pass, where the weight needs it)
        if need_x and dx is None:
            # in PyTorch's order of operations (its CPU kernel: sums over x itself, then
            # dx = rstd * gw + b * x + c), so that rounding goes as there
            gw = g * weight if weight is not None else g
            ds = R.sum(gw * x, dims, keepdim=True)
            dbr = R.sum(gw, dims, keepdim=True)
            scale = 1.0 / math.prod(x.shape[d] for d in dims)
            b = (dbr * mean - ds) * (rstd * rstd * rstd) * scale
            c = -b * mean - dbr * rstd * scale
            dx = rstd * gw + b * x + c
        batch = tuple(range(x.dim() - len(dims)))
        if need_w:
            if gx is None:
                gx = g * ((x - mean) * rstd)
            dw = R.sum(gx, batch) if batch else gx
        if need_b:
            db = R.sum(g, batch) if batch else g
        return dx, dw, db, None, None
