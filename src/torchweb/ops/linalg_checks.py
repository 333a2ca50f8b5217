"""What torch.linalg's decompositions share: LinAlgError, the input checks PyTorch makes (with
its messages), the named result tuples, and turning an `info` tensor into PyTorch's error."""

from collections import namedtuple

from .. import _dtype as D


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a singular or not positive-definite input (a RuntimeError, as
    PyTorch's)."""


LinAlgError.__module__ = "torch._C"
LinAlgError.__qualname__ = LinAlgError.__name__ = "_LinAlgError"


def _tuple(name, fields):
    t = namedtuple(name, fields)
    t.__module__ = "torch.return_types"
    return t


CholeskyEx = _tuple("linalg_cholesky_ex", ["L", "info"])
InvEx = _tuple("linalg_inv_ex", ["inverse", "info"])
SolveEx = _tuple("linalg_solve_ex", ["result", "info"])
LUFactor = _tuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorEx = _tuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LU = _tuple("linalg_lu", ["P", "L", "U"])
LUUnpack = _tuple("lu_unpack", ["P", "L", "U"])
Slogdet = _tuple("linalg_slogdet", ["sign", "logabsdet"])
TorchSlogdet = _tuple("slogdet", ["sign", "logabsdet"])
QR = _tuple("linalg_qr", ["Q", "R"])
TorchQR = _tuple("qr", ["Q", "R"])
Eigh = _tuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SVD = _tuple("linalg_svd", ["U", "S", "Vh"])
TorchSVD = _tuple("svd", ["U", "S", "V"])
Lstsq = _tuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
TriangularSolve = _tuple("triangular_solve", ["solution", "cloned_coefficient"])
Geqrf = _tuple("geqrf", ["a", "tau"])
LDLFactor = _tuple("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorEx = _tuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])

_C_NAMES = {"int64": "Long", "int32": "Int", "uint8": "Byte", "bool": "Bool", "float16": "Half",
            "float32": "Float"}


def c_name(dtype):
    return _C_NAMES.get(dtype.name, dtype.name)


def check_matrix(A, name, square=True, what="A", kernel=None, int_kernel=False):
    """PyTorch's checks: at least 2 dims, square (unless not needed), float32 (check_float)."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    check_float(A, name, kernel, int_kernel)


def check_float(A, name, kernel=None, int_kernel=False):
    """float32 only, refused as PyTorch's CPU build refuses: where the op reaches a LAPACK
    kernel (`kernel`) without a check of its own, that kernel's NotImplementedError (for
    integer dtypes too when int_kernel), else the op's RuntimeError."""
    if A.dtype is D.float32:
        return
    if kernel is not None and (A.dtype.is_floating_point or int_kernel):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{c_name(A.dtype)}'")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {c_name(A.dtype)}")
    raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {c_name(A.dtype)}")


def check_same(A, B, name):
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{c_name(A.dtype)} and B of type {c_name(B.dtype)} instead")
    if A.device != B.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                           f"devices, {A.device} and {B.device}!")


def raise_for_info(info, message):
    """Raise LinAlgError where `info` (int tensor, one per matrix) is nonzero: message(order)
    for the first such matrix, prefixed by its batch index as PyTorch does for batches (one
    small read-back)."""
    if info.numel() == 0:
        return
    flat = info.reshape(-1)
    bad = flat.ne(0)
    if not bool(bad.any()):
        return
    values = flat.tolist()
    i = next(k for k, v in enumerate(values) if v != 0)
    text = message(values[i])
    if info.dim() > 0:
        name, rest = text.split(": ", 1)
        text = f"{name}: (Batch element {i}): {rest}"
    raise LinAlgError(text)
