"""The sparse COO operations that the tensor type (_sparse_coo.py), torch.sparse and
torch.mm/matmul (ops/linalg.py) share: products are gathers and scatter-adds over the entries
(index_select, index_add), sum goes through the dense tensor, addition merges the entry lists
(worked out on the host) or scatter-adds into a dense tensor. All are dense ops underneath, so
gradients reach the values and the dense operands. Sparse tensors are read through their
methods and fields only, so this module sits below the tensor type."""

import builtins

from ._size import wrap_dim

_LAYOUT = "layout torch.sparse_coo"


def refusal(op):
    what = f"Could not run '{op}' on" if op else "A dense op was given"
    return NotImplementedError(
        f"{what} a sparse COO tensor ({_LAYOUT}): torchweb's sparse tensors "
        "support construction, conversion, coalesce, indices/values, addition, sum, softmax and "
        "sparse @ dense products; call .to_dense() first")


def _shape_str(t):
    return "x".join(str(s) for s in t.shape)


def _check_matrix(s):
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise refusal(f"mm of a sparse tensor with sparse_dim {s.sparse_dim()} and dense_dim "
                       f"{s.dense_dim()} (only 2-D sparse matrices)")


def _sparse_dense(s, d):
    """s [M, K] sparse times d [K, N] or [K] dense: each entry (i, k, v) adds v * d[k] to row i."""
    _check_matrix(s)
    vec = d.dim() == 1
    if d.dim() not in (1, 2) or s.shape[1] != d.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(s)} and {_shape_str(d)})")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {s.dtype} != {d.dtype}")
    if s.device != d.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found {s.device} and {d.device}")
    d2 = d.unsqueeze(1) if vec else d
    rows, cols = s._sp_indices[0], s._sp_indices[1]
    picked = d2.index_select(0, cols) * s._sp_values.unsqueeze(1)
    out = picked.new_zeros((s.shape[0], d2.shape[1])).index_add(0, rows, picked)
    return out.squeeze(1) if vec else out


def mm(mat1, mat2, reduce="sum"):
    """mat1 @ mat2 with mat1 or mat2 sparse: dense unless both are sparse (then sparse).
    Both are matrices (torch.matmul's sparse path, _product, also takes a dense vector)."""
    if reduce != "sum":
        raise refusal(f"torch.sparse.mm with reduce={reduce!r}")
    for t, dim in ((mat1, -2), (mat2, 1)):
        if t.dim() < 2:   # (PyTorch's message: the dense operand's size(dim) is out of range)
            raise IndexError(f"Dimension out of range (expected to be in range of [-{max(t.dim(), 1)}, "
                             f"{max(t.dim(), 1) - 1}], but got {dim})")
    return product(mat1, mat2)


def product(mat1, mat2):
    """mat1 @ mat2, one of them sparse (a 2-D matrix), the other a dense matrix or vector."""
    a, b = mat1.is_sparse, mat2.is_sparse
    if a and b:
        return _sparse_dense(mat1, mat2.to_dense()).to_sparse()
    if a:
        return _sparse_dense(mat1, mat2)
    if b:
        _check_matrix(mat2)
        if mat1.dim() == 1:
            return _sparse_dense(mat2.t(), mat1)
        if mat1.dim() != 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(mat1)} and {_shape_str(mat2)})")
        return _sparse_dense(mat2.t(), mat1.t()).t()
    return mat1 @ mat2


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse, mat and mat2 dense."""
    prod = mm(mat1, mat2)
    return prod * alpha + mat * beta if beta else prod * alpha


def sum(input, dim=None, dtype=None):
    """The sum of the entries: a dense 0-d tensor for dim=None or when every sparse dim is
    summed, else a sparse tensor of the remaining dims."""
    if not input.is_sparse:
        raise RuntimeError("torch.sparse.sum expects a sparse tensor (layout torch.sparse_coo)")
    if dim is None:
        return input._values().sum(dtype=dtype) if dtype is not None else input._values().sum()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = sorted({wrap_dim(d, input.dim()) for d in dims})
    dense = input.to_dense()
    out = dense.sum(dims, dtype=dtype) if dtype is not None else dense.sum(dims)
    left = input.sparse_dim() - builtins.sum(1 for d in dims if d < input.sparse_dim())
    return out if left == 0 else out.to_sparse(left)


def _check_same_size(a, b):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(a.shape)} while other has size {list(b.shape)} (FYI: dense-sparse addition "
                           "does not currently support broadcasting)")


def merged(t, s, alpha=1):
    """t + alpha * s, both sparse of one size: (indices, values, coalesced) as PyTorch's CPU
    kernel makes them, a walk over both entry lists that takes the smaller index first and sums
    two entries at an equal index (no sort: uncoalesced inputs give an uncoalesced sum that
    keeps every entry, as PyTorch's, so gradient accumulation concatenates)."""
    _check_same_size(t, s)
    ti, si = t._indices(), s._indices().to(t.device)
    tk, sk = list(zip(*ti.tolist())), list(zip(*si.tolist()))
    if not t._nnz():
        tk = []
    if not s._nnz():
        sk = []
    t_at, s_at, keys = [], [], []
    i = j = 0
    while i < len(tk) or j < len(sk):
        cmp = -1 if i >= len(tk) else 1 if j >= len(sk) else (tk[i] < sk[j]) - (tk[i] > sk[j])
        if cmp >= 0:
            t_at.append(len(keys))
            key = tk[i]
            i += 1
        if cmp <= 0:
            s_at.append(len(keys))
            key = sk[j]
            j += 1
        keys.append(key)
    tv, sv = t._values(), s._values().to(t.device, t.dtype)
    values = tv.new_zeros((len(keys),) + tuple(tv.shape[1:]))
    if t_at:
        values = values.index_add(0, ti.new_tensor(t_at), tv)
    if s_at:
        values = values.index_add(0, ti.new_tensor(s_at), sv, alpha=alpha)
    indices = ti.new_tensor([list(c) for c in zip(*keys)] if keys else [[]] * ti.shape[0]).view(ti.shape[0], len(keys))
    return indices, values, t.is_coalesced() and s.is_coalesced()


def dense_plus(dense, s, alpha=1, inplace=False):
    """dense + alpha * s (s sparse, of dense's size): a dense tensor, dense itself when inplace
    (each entry added at its row of dense seen as [rows of the sparse dims, *dense dims])."""
    _check_same_size(dense, s)
    nsparse = s.sparse_dim()
    rows = 1
    for n in dense.shape[:nsparse]:
        rows *= n
    flat = linear_index(s._indices(), dense.shape[:nsparse]).to(dense.device)
    values = s._values().to(dense.device, dense.dtype)
    view = (rows,) + tuple(dense.shape[nsparse:])
    if inplace:
        dense.view(view).index_add_(0, flat, values, alpha=alpha)
        return dense
    return dense.reshape(view).index_add(0, flat, values, alpha=alpha).view(dense.shape)


def linear_index(indices, sizes):
    """The row-major position of each entry among the sparse dims (an int64 tensor [nnz])."""
    flat = None
    for d, n in enumerate(sizes):
        row = indices[d]
        flat = row if flat is None else flat * n + row
    return indices.new_zeros(indices.shape[1]) if flat is None else flat
