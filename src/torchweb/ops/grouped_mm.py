"""grouped_mm: one matmul per group of a mixture-of-experts layer, the groups of a 2-D operand
cut at `offs` (int32 ends). Composed from slices, matmul and cat, so the gradient is theirs; the
offsets are read back to cut the slices. Rows (or columns) past offs[-1], which PyTorch leaves
unset, are zeros here."""

from .. import _dtype as D
from .operands import is_tensor
from .registry import define
from .._creation import zeros
from .join import cat, stack
from .linalg import matmul


@define("grouped_mm", "linalg", torch=False, method=False, functional=True, dtypes="floating")
def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None) -> Tensor

    Per group g (ends offs): 2-D a (M, K) x 3-D b (G, K, N): rows of a in group g times b[g]
    -> (M, N); 3-D a (G, M, K) x 2-D b (K, N): a[g] times the columns of b in group g -> (M, N);
    2-D x 2-D: a[:, group] times b[group] -> (G, M, N); 3-D x 3-D (no offs): bmm."""
    for t, name in ((mat_a, "mat_a"), (mat_b, "mat_b")):
        if not is_tensor(t):
            raise TypeError(f"grouped_mm(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t.dtype not in (D.float32, D.float16):
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {t.dtype.word}")
        if t.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    a_3d, b_3d = mat_a.dim() == 3, mat_b.dim() == 3
    if (offs is None) != (a_3d and b_3d):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if a_3d and b_3d:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("matrix batch sizes have to match")
        return matmul(mat_a, mat_b)
    if offs.dtype is not D.int32:
        raise RuntimeError("Offsets have to be int32")
    ends = [int(v) for v in offs.tolist()]
    starts = [0] + ends[:-1]
    if b_3d or a_3d:
        groups = mat_b.shape[0] if b_3d else mat_a.shape[0]
        if len(ends) != groups:
            raise RuntimeError("matrix batch sizes have to match")
    if b_3d:        # (M, K) x (G, K, N): rows of a by group
        parts = [matmul(mat_a[s:e], mat_b[g]) for g, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_a.shape[0] - ends[-1] if ends else mat_a.shape[0]
        parts.append(zeros((rest, mat_b.shape[-1]), dtype=mat_a.dtype, device=mat_a.device))
        return cat(parts, 0)
    if a_3d:        # (G, M, K) x (K, N): columns of b by group
        parts = [matmul(mat_a[g], mat_b[:, s:e]) for g, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_b.shape[1] - ends[-1] if ends else mat_b.shape[1]
        parts.append(zeros((mat_a.shape[1], rest), dtype=mat_a.dtype, device=mat_a.device))
        return cat(parts, 1)
    # (M, K) x (K, N), K cut into groups: one (M, N) product per group
    return stack([matmul(mat_a[:, s:e], mat_b[s:e]) for s, e in zip(starts, ends)], 0)
