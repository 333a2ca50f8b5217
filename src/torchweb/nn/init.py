"""torch.nn.init: PyTorch's initializers with their signatures, checks and messages.

Every initializer writes its tensor in place under no_grad and draws from torchweb's seeded
generator (torchweb.manual_seed, or the `generator=` argument). torchweb's Philox stream is not
PyTorch's mt19937, so seeded values differ from PyTorch's; the distributions, bounds and
deterministic results (constant_, eye_, dirac_, the gains and fans) are PyTorch's.

Two differences in method, documented in docs/nn.md:
- trunc_normal_ uses the inverse-CDF method (uniform in [cdf(a), cdf(b)], then erfinv, then a
  clamp to [a, b]); PyTorch 2.13 uses rejection sampling. Same distribution, and no read-back
  (rejection needs one per round), so it runs where a sync read-back is impossible. In float32
  the inverse CDF loses precision when [a, b] lies far in one tail (more than ~5 std from
  the mean), where values bunch at the bounds.
- orthogonal_ computes the QR factorization with classical Gram-Schmidt applied twice per
  column (CGS2, orthogonal to float32 precision) from torchweb's own ops, on the tensor's device:
  torchweb.linalg has no qr. Gram-Schmidt's R has a positive diagonal, which is the Q that
  PyTorch's sign fix (q *= sign(diag(r))) selects.
"""

import math
import warnings

from .. import _creation as C
from ..autograd.grad_mode import no_grad
from .. import _dtype as D, _random
from ..linalg import vector_norm

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
]


def _no_grad_uniform_(tensor, a, b, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=3)
    with no_grad():
        lo = norm_cdf((a - mean) / std)
        hi = norm_cdf((b - mean) / std)
        # uniform in [2 lo - 1, 2 hi - 1], then the inverse of erf: a standard normal
        # truncated to [(a - mean) / std, (b - mean) / std]
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def _no_grad_fill_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def _no_grad_zero_(tensor):
    with no_grad():
        return tensor.zero_()


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + negative_slope**2)) for leaky_relu (param, default 0.01),
    3/4 for selu. ValueError for others."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    elif nonlinearity == "tanh":
        return 5.0 / 3
    elif nonlinearity == "relu":
        return math.sqrt(2.0)
    elif nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    elif nonlinearity == "selu":
        return 3.0 / 4
    else:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill tensor with values drawn from U(a, b)."""
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill tensor with values drawn from N(mean, std**2)."""
    return _no_grad_normal_(tensor, mean, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill tensor with values drawn from N(mean, std**2) truncated to [a, b] (inverse-CDF
    method; every value lies in [a, b])."""
    return _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=generator)


def constant_(tensor, val):
    """Fill tensor with the value val."""
    return _no_grad_fill_(tensor, val)


def ones_(tensor):
    """Fill tensor with 1."""
    return _no_grad_fill_(tensor, 1.0)


def zeros_(tensor):
    """Fill tensor with 0."""
    return _no_grad_zero_(tensor)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ones on the main diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(C.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D tensor with the Dirac delta: a convolution with it keeps the
    identity of as many input channels as it can, per group."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    strides = [1] * dimensions      # of a contiguous tensor of this shape
    for i in range(dimensions - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    centre = sum((sizes[k] // 2) * strides[k] for k in range(2, dimensions))
    flat = [0] * tensor.numel()
    for g in range(groups):
        for d in range(min_dim):
            flat[(g * out_chans_per_grp + d) * strides[0] + d * strides[1] + centre] = 1
    with no_grad():
        if flat:
            tensor.copy_(C.tensor(flat, dtype=tensor.dtype, device=tensor.device).view(tuple(sizes)))
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    fan_in = num_input_fmaps * receptive_field_size
    fan_out = num_output_fmaps * receptive_field_size
    return fan_in, fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot initialization: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _no_grad_uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot initialization: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _no_grad_normal_(tensor, 0.0, std, generator)


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan_mode), both kaiming inits' standard deviation; None (with PyTorch's
    warning, at the init's caller) for a zero-element tensor."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialization: U(-bound, bound) with bound = gain * sqrt(3 / fan_mode)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    with no_grad():
        return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialization: N(0, std**2) with std = gain / sqrt(fan_mode)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    with no_grad():
        return tensor.normal_(0, std, generator=generator)


def _orthonormal_columns(a):
    """Q of the reduced QR factorization of a tall float32 matrix a (m, n), m >= n, with R's
    diagonal positive: classical Gram-Schmidt run twice per column (CGS2), on a's device."""
    m, n = a.shape
    q = C.zeros((m, n), dtype=a.dtype, device=a.device)
    for k in range(n):
        v = a[:, k]
        if k:
            qk = q[:, :k]
            v = v - qk.mv(qk.t().mv(v))
            v = v - qk.mv(qk.t().mv(v))   # the second pass restores orthogonality
        q[:, k] = v / vector_norm(v)
    return q


def orthogonal_(tensor, gain=1, generator=None):
    """Fill tensor with a (semi-)orthogonal matrix (Saxe et al. 2013), scaled by gain: the Q of
    a Gaussian matrix's QR factorization (trailing dims are flattened)."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flattened = C.empty((rows, cols), dtype=D.float32, device=tensor.device).normal_(0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.t()
        q = _orthonormal_columns(flattened)
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tuple(tensor.shape)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor as a sparse matrix: N(0, std**2) values with ceil(sparsity * rows)
    zeros in each column, at random rows."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        if num_zeros and rows and cols:
            keep = [[True] * cols for _ in range(rows)]
            for col_idx in range(cols):
                for r in _random.permutation(rows, generator, tensor.device)[:num_zeros]:
                    keep[r][col_idx] = False
            zero = C.tensor(keep, device=tensor.device).logical_not()
            tensor.masked_fill_(zero, 0)
    return tensor


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__doc__ = f"{old_name}(...): deprecated, use nn.init.{new_name}."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from .._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn.init", "torchweb.nn.init")
