"""matmul and its family: mm, bmm, mv, dot, matmul with batch broadcasting, addmm, linear."""

from math import prod

from .. import _dtype as D
from .._size import Size, broadcast_shapes, contiguous_strides
from ..autograd import grad_mode
from ..autograd.grad_mode import _state as _grad
from ..autograd.function import Function
from ..backends import backend_for
from . import lowering
from .operands import common_device, empty, expand_to, need_tensors
from .._tensor import Tensor
from . import elementwise as E
from .elementwise import call
from . import shape as S
from .registry import define
from .._sparse_math import mm as sparse_mm, product as sparse_product


def _check_dtypes(a, b, kernel="addmm_impl_cpu_"):
    """Same dtype on both sides, and not bool (PyTorch has no bool matmul kernels)."""
    if a.dtype is D.bool and b.dtype is D.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.c_name} != {b.dtype.c_name}")


def raw_matmul(a, b, defer=True):
    """[*Ba, M, K] @ [*Bb, K, N] -> contiguous [*B, M, N], batch dims broadcast. No autograd.
    defer: False runs the product now (a weight's gradient: nothing elementwise follows it
    for its kernel to store, lowering.matmul)."""
    *ba, M, K = a._shape
    *bb, _, N = b._shape
    if ba == bb and K:   # (the common case, without broadcasting's steps)
        return _product(a, b, (*ba, M, N), defer=defer)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = empty(batch + (a.shape[-2], b.shape[-1]), a.dtype, a.device)
    ae = _expand(a, batch + a.shape[-2:])
    be = _expand(b, batch + b.shape[-2:])
    K = a.shape[-1]
    if K == 0:
        return E.fill(out, 0)
    lowering.matmul(out, ae, be, "f" if a.dtype.is_floating_point else "i", defer)
    return out


def _expand(t, shape):
    return expand_to(t, shape)


def _product(a, b, shape, a_view=None, defer=True):
    """A fresh contiguous `shape` = a @ b, batch dims equal (no broadcasting), K > 0, no
    autograd; a_view: a's rows folded into one matrix, `shape`'s batch then folded likewise."""
    dt, dev = a.dtype, a.device
    out = Tensor._new(backend_for(dev.type).empty_storage(prod(shape), dt), Size(shape), dt, dev)
    acc = "f" if dt.is_floating_point else "i"
    if a_view is None:
        lowering.matmul(out, a, b, acc, defer)
    else:
        N = shape[-1]
        lowering.matmul(out._view((a_view._shape[0], N), (N, 1), 0), a_view, b, acc)
        lowering.matmul_reshaped(out)   # (a deferred product pending in out's shape: what reads out inlines it)
    return out


def _matmul_fast(a, b):
    """a @ b in few Python steps for the common case (every linear layer and attention product
    comes here): float tensors of one dtype and device, both at least 2-D, K matching and
    nonzero, equal batch dims or b a matrix. None: the general path decides (PyTorch's rules
    and errors for everything else)."""
    try:
        *ba, M, K = a._shape   # (unpacked: indexing a Size runs Python code)
        *bb, K2, N = b._shape
    except (AttributeError, ValueError):   # not tensors, or fewer than 2 dims
        return None
    dt = a.dtype
    if dt is not b.dtype or not dt.is_floating_point or K != K2 or not K:
        return None
    da, db = a.device, b.device
    if da is not db and da != db:
        return None
    # (requires_grad, a property, read only for views, whose history it may renew: as the
    # elementwise operators do)
    tracked = (a._requires_grad or b._requires_grad or (a._base is not None or b._base is not None)
               and (a.requires_grad or b.requires_grad)) and _grad["enabled"]
    if ba == bb:
        if tracked:
            return (_Matmul if ba else _Mm).apply(a, b)
        return _product(a, b, (*ba, M, N))
    if not bb and not tracked and a._stride == contiguous_strides(a._shape):
        # the batch folded into the rows, as PyTorch does: one [B*M, K] @ [K, N] product,
        # written into the [*B, M, N] output through a matrix view of it
        rows = prod(a._shape) // K
        return _product(a, b, (*ba, M, N), a._view((rows, K), (K, 1), a._offset))
    if not bb:
        # the same fold where a gradient is recorded (or a is strided): through reshape's views
        rows = prod(a._shape) // K
        return S._reshape_back(_Mm.apply(S.reshape(a, (rows, K)), b), (*ba, M, N))
    return None


class _Matmul(Function):
    _backward_name = "BmmBackward0"
    _forward_is_raw = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return raw_matmul(a, b)

    _double_backward = True

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # (create_graph: grad mode is on, and the products are recorded)
        mm = _Matmul.apply if grad_mode._state["enabled"] else raw_matmul
        ga = mm(g, S.transpose(b, -1, -2)) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            if b.dim() == 2 and b._stride[0] == 1 and b._shape[0] > 1 and b._shape[1] > 1:
                # b is a transposed matrix (linear's weight.t()): its gradient made in the
                # weight's own layout, (g^T a)^T, so that the weight's .grad is contiguous
                # and no copy is made to store it (one dispatch a linear layer fewer)
                gt = S.transpose(g, -1, -2)
                gb = S.transpose(mm(gt, a) if mm is not raw_matmul else raw_matmul(gt, a, False), -1, -2)
            else:   # (b's gradient: nothing elementwise follows it either, but a sum to b's shape)
                at = S.transpose(a, -1, -2)
                gb = mm(at, g) if mm is not raw_matmul else raw_matmul(at, g, False)
        return ga, gb


class _Mm(_Matmul):
    _backward_name = "MmBackward0"


def _batched(a, b):
    return (_Mm if a.dim() == 2 and b.dim() == 2 else _Matmul).apply(a, b)


def _matmul_kernel(a, b):
    """The PyTorch kernel matmul reaches for these ranks (named in its bool error)."""
    if a.dim() == 1 and b.dim() == 1:
        return "dot"
    if a.dim() == 2 and b.dim() == 1:
        return "addmv_impl_cpu"
    return "bmm" if a.dim() >= 3 and b.dim() >= 3 else "addmm_impl_cpu_"


def _shape_str(t):
    return "x".join(str(s) for s in t.shape)


@define("mm", "linalg", out=True, doc='mm(input, mat2) -> Tensor\n\nThe matrix product of two 2-D tensors.')
def mm(input, mat2, *, out_dtype=None):
    if out_dtype is not None and out_dtype is not input.dtype:   # (a wider result: the operands widened first)
        return mm(input.to(out_dtype), mat2.to(out_dtype))
    try:
        sparse = input.is_sparse or mat2.is_sparse   # (a class attribute: _sparse_coo.py)
    except AttributeError:   # not a tensor (None): PyTorch's TypeError
        need_tensors("mm", ("input", input), ("mat2", mat2))
        raise
    if sparse:
        return sparse_mm(input, mat2)
    common_device(input, mat2, what="mm")
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(input)} and {_shape_str(mat2)})")
    _check_dtypes(input, mat2)
    return _batched(input, mat2)


@define("spmm", "linalg", method=False)
def spmm(input, mat2):
    """spmm(input, mat2) -> Tensor

    The matrix product of two 2-D tensors, either of them sparse: torch.mm under its older name
    (the sparse @ dense product of graph convolutions)."""
    return mm(input, mat2)


@define("bmm", "linalg", out=True, doc='bmm(input, mat2) -> Tensor\n\nBatched matrix products of two 3-D tensors.')
def bmm(input, mat2, *, out_dtype=None):
    if out_dtype is not None and out_dtype is not input.dtype:   # (a wider result: the operands widened first)
        return bmm(input.to(out_dtype), mat2.to(out_dtype))
    common_device(input, mat2, what="bmm")
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[0] != input.shape[0] or mat2.shape[1] != input.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_dtypes(input, mat2, "bmm")
    return _batched(input, mat2)


@define("matmul", "linalg", out=True, doc="matmul(input, other) -> Tensor\n\nThe matrix product with PyTorch's rules: 1-D operands, batch dims broadcast.")
def matmul(input, other):
    if input.is_sparse or other.is_sparse:   # (a class attribute: _sparse_coo.py)
        return sparse_product(input, other)
    out = _matmul_fast(input, other)
    if out is not None:
        return out
    common_device(input, other, what="matmul")
    if input.dim() == 0 or other.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{input.dim()}D and {other.dim()}D")
    _check_dtypes(input, other, _matmul_kernel(input, other))
    if input.dim() == 1 and other.dim() == 1:
        if input.shape[0] != other.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                               f"[{other.shape[0]}] to have the same number of elements, but got "
                               f"{input.shape[0]} and {other.shape[0]} elements respectively")
        return S.reshape(_batched(S.unsqueeze(input, 0), S.unsqueeze(other, 1)), ())
    a2 = S.unsqueeze(input, 0) if input.dim() == 1 else input
    b2 = S.unsqueeze(other, 1) if other.dim() == 1 else other
    if a2.shape[-1] != b2.shape[-2]:
        if a2.dim() == 2 and b2.dim() == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a2)} and {_shape_str(b2)})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a2.shape[0] if a2.dim() > 2 else 1}, {a2.shape[-1]}] but got: "
                           f"[{b2.shape[0] if b2.dim() > 2 else 1}, {b2.shape[-2]}].")
    broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    if a2.dim() > 2 and b2.dim() == 2:
        # as PyTorch: the batch folds into the rows, one [B*M, K] @ [K, N] product (a linear layer
        # on [B, T, C] is one matmul, not B products against a broadcast weight)
        rows = 1
        for s in a2.shape[:-1]:
            rows *= s
        out = S.reshape(_batched(S.reshape(a2, (rows, a2.shape[-1])), b2), a2.shape[:-1] + (b2.shape[-1],))
        if out._storage.pending is not None:
            lowering.matmul_reshaped(out)
    else:
        out = _batched(a2, b2)
    if input.dim() == 1:
        out = S.squeeze(out, -2)
    if other.dim() == 1:
        out = S.squeeze(out, -1)
    return out


@define("mv", "linalg", out=True, doc='mv(input, vec) -> Tensor\n\nMatrix times vector.')
def mv(input, vec):
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {vec.dim()}, {vec.dim()}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    return matmul(input, vec)


@define("dot", "linalg", out=True, doc='dot(input, other) -> Tensor\n\nThe dot product of two 1-D tensors.')
def dot(input, tensor):
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    return matmul(input, tensor)


@define("addmm", "linalg", out=True, inplace=lambda self, mat1, mat2, *, beta=1, alpha=1:
        self.copy_(addmm(self, mat1, mat2, beta=beta, alpha=alpha)), doc='addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor\n\nbeta * input + alpha * (mat1 @ mat2); input is ignored when beta is 0, the product when alpha is 0.')
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out_dtype=None):
    if out_dtype is not None and out_dtype is not mat1.dtype:   # (a wider result: the operands widened first)
        return addmm(input.to(out_dtype), mat1.to(out_dtype), mat2.to(out_dtype), beta=beta, alpha=alpha)
    if not mat1.dtype.is_floating_point:   # integer results stay integers: the scalars truncate
        alpha, beta = int(alpha), int(beta)
    prod = mm(mat1, mat2)
    if alpha == 0:   # PyTorch ignores the product (even NaN), as it ignores input at beta 0
        everywhere = E.fill(empty(prod.shape, D.bool, prod.device), True)
        prod = call("where", everywhere, 0, prod)   # zeros, still connected for autograd
    elif alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (input if beta == 1 else input * beta)


@define("linear", "linalg", torch=False, method=False, functional=True, doc='linear(input, weight, bias=None) -> Tensor\n\ninput @ weight.T + bias.')
def linear(input, weight, bias=None):
    wdim = weight.dim()
    if wdim not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {wdim}-D")
    if wdim != 2 and bias is not None and input.dim() == 2:  # PyTorch's addmm path
        raise RuntimeError(f"mat2 must be a matrix, got {wdim}-D tensor")
    if wdim == 2:
        if weight.requires_grad and _grad["enabled"]:
            weight_t = S.t(weight)
        else:   # (no gradient to record: the transposed view made directly)
            (o, i), (so, si) = weight._shape, weight._stride
            weight_t = weight._view((i, o), (si, so), weight._offset)
    else:
        weight_t = weight
    if bias is not None and input.dtype in D.HALF_FLOATS and weight_t.dim() == 2 and input.dim() >= 1 \
            and input.dtype is weight.dtype is bias.dtype and not (grad_mode.is_grad_enabled() and (
                input.requires_grad or weight.requires_grad or bias.requires_grad)):
        return _half_linear(input, weight_t, bias)
    out = matmul(input, weight_t)
    if bias is not None:
        out = out + bias
    return out


def _half_linear(input, weight_t, bias):
    """float16/bfloat16 input @ weight_t + bias as PyTorch's CPU addmm: the product kept in
    float32, the bias added there and the sum rounded once (rounding the product first moves
    results by up to half a unit of the product, large where the bias cancels it)."""
    K, N = weight_t.shape
    if input.shape[-1] != K:
        return matmul(input, weight_t) + bias   # (its error message)
    x = S.reshape(input, (-1, K))
    out = empty((x.shape[0], N), D.float32, input.device)
    if K == 0:
        E.fill(out, 0)
    else:
        lowering.matmul(out, x, weight_t, "f")
    return S.reshape((out + bias).to(input.dtype), tuple(input.shape[:-1]) + (N,))


@define("bilinear", "linalg", method=False, functional=True,
        doc="bilinear(input1, input2, weight, bias=None) -> Tensor\n\n"
            "y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o].")
def bilinear(input1, input2, weight, bias=None):
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): weight {list(weight.shape)} does not match input1 "
                           f"{list(input1.shape)} and input2 {list(input2.shape)}")
    # (x1 W) then a batched dot with x2: two matmuls, gradients from their rules
    o, i, j = weight.shape
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, i)
    x2 = input2.reshape(-1, j)
    t = matmul(x1, S.permute(weight, (1, 0, 2)).reshape(i, o * j)).reshape(-1, o, j)
    out = matmul(t, x2.unsqueeze(-1)).squeeze(-1).reshape(tuple(lead) + (o,))
    if bias is not None:
        out = out + bias
    return out
