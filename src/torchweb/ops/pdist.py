"""pdist: the p-norm distance between every pair of rows i < j of an (N, M) input, in the
order of the upper triangle (N (N - 1) / 2 values). Composed from index_select and the norm
reduction, so its gradient is the norm's (0 where two rows are equal, as PyTorch's)."""

from .elementwise import call
from .registry import define
from . import reduction as R
from .. import _dtype as D
from .._creation import tensor


@define("pdist", "linalg", dtypes="floating", method=False, functional=True)
def pdist(input, p=2):
    """pdist(input, p=2) -> Tensor

    The p-norm distances between the rows of input (N, M): for i < j in row-major order of the
    upper triangle, ||input[i] - input[j]||_p (p >= 0; 0 counts the differing entries, inf takes
    the largest difference)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    if not rows:
        return input.new_zeros((0,))
    a = input.index_select(0, tensor(rows, dtype=D.int64, device=input.device))
    b = input.index_select(0, tensor(cols, dtype=D.int64, device=input.device))
    d = a - b
    if p == 0:   # the count of differing entries, through sign so that its gradient is 0 (not none)
        return R.sum(call("abs", call("sign", d)), -1)
    if p == float("inf"):
        # PyTorch's pdist backward gives every tied maximum the whole gradient (sign(d)), where
        # the norm's shares it: the max as a constant plus (|d| - |d|) over the maxima
        ad = call("abs", d)
        mx = R.amax(ad, -1, keepdim=True).detach()
        ties = call("eq", ad, mx)
        return mx.squeeze(-1) + R.sum((ad - ad.detach()) * ties, -1)
    if p in (1, 2):
        return R.norm(d, float(p), -1)
    # other p: the norm's gradient is 0/0 at a zero distance, where PyTorch's is 0
    zero = call("eq", R.amax(call("abs", d), -1, keepdim=True), 0.0)
    r = R.norm(call("where", zero, 1.0, d), float(p), -1)
    return call("where", zero.squeeze(-1), 0.0, r)
