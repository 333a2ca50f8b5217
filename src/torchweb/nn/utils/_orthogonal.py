"""parametrizations.orthogonal: a weight kept orthogonal (orthonormal columns, or rows when wide)
through one of three maps of an unconstrained tensor: the matrix exponential or the Cayley map
of a skew-symmetric matrix, or a product of Householder reflectors. With the dynamic
trivialization (the default) a buffer `base` holds the orthogonal matrix a step starts from.
Built on torch.linalg (docs/linalg.md)."""

from ... import _creation as C
from ... import linalg
from ...autograd.grad_mode import no_grad
from ...ops.elementwise import call
from ...ops.join import cat
from ...ops.linalg_torch_forms import geqrf
from ..._tensor import Tensor
from ..modules.module import Module
from . import parametrize

_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = C.eye(k, dtype=Q.dtype, device=Q.device)
    return bool(((Q.mT @ Q - eye).abs() <= 10.0 * n * 1.1920928955078125e-07).all())


def _orthonormalized(A):
    """Q of a tall A = QR with R's diagonal made non-negative."""
    a, tau = geqrf(A)
    return linalg.householder_product(a, tau) * a.diagonal(0, -2, -1).sign().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        wide = X.shape[-2] < X.shape[-1]
        if wide:
            X = X.mT
        n, k = X.shape[-2], X.shape[-1]
        if self.orthogonal_map == "householder":
            V = X.tril(-1)
            Q = linalg.householder_product(V, 2.0 / (1.0 + (V * V).sum(-2)))
            Q = Q * X.diagonal(0, -2, -1).int().unsqueeze(-2)   # (signs from right_inverse's diagonal)
        else:
            L = X.tril()
            if n != k:
                L = cat([L, L.new_zeros((n, n - k)).expand(tuple(L.shape[:-2]) + (n, n - k))], -1)
            A = L - L.mT     # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                eye = C.eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            Q = Q[..., :k] if n != k else Q
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if wide else Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        original = Q
        wide = Q.shape[-2] < Q.shape[-1]
        if wide:
            Q = Q.mT
        n, k = Q.shape[-2], Q.shape[-1]
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            a, tau = geqrf(Q)
            # the diagonal keeps only R's signs, flipped where no reflector acted (tau = 0)
            d = a.diagonal(0, -2, -1).sign()
            on = C.eye(n, k, dtype=a.dtype, device=a.device) != 0
            a = call("where", on, call("where", tau == 0.0, -d, d).unsqueeze(-2), a)
            return a.mT if wide else a
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _orthonormalized(Q)
        else:
            extra = C.randn(tuple(Q.shape[:-2]) + (n, n - k), dtype=Q.dtype, device=Q.device)
            Q = _orthonormalized(cat([Q, extra], -1))
        self.base = Q
        # the parametrization's input that gives base back: -I (its maps send it to I)
        return -C.eye(original.shape[-2], original.shape[-1], dtype=Q.dtype, device=Q.device).expand(
            tuple(original.shape)).clone()


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Registers an orthogonal parametrization of module.<name> (PyTorch's orthogonal_map: None
    picks "matrix_exp" for a square weight, "householder" otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrize.register_parametrization(
        module, name, _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization), unsafe=True)
    return module
