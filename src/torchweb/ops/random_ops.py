"""Sampling ops model code calls: multinomial, bernoulli, normal and the in-place distributions
(exponential_, bernoulli_, log_normal_, cauchy_, geometric_, random_). All are compositions of the
seeded uniform/normal generators with existing ops, so they run on every device."""

import math

from .. import _dtype as D
from .._is_tensor import is_tensor
from ..autograd import grad_mode
from ..backends import backend_for
from .out_arg import write_out
from .registry import define
from .._creation import empty, randn, _options
from .._size import broadcast_shapes
from .search import searchsorted


def _uniform_like(t, generator=None, dtype=None):
    u = empty(t.shape, dtype=dtype or (t.dtype if t.dtype.is_floating_point else D.float32),
              device=t.device)
    return u.uniform_(0.0, 1.0, generator=generator)


@define("multinomial", "other", differentiable=False,
        doc="multinomial(input, num_samples, replacement=False, *, generator=None) -> LongTensor\n\n"
            "Indices sampled from the rows of `input` (non-negative weights, not necessarily "
            "summing to 1).")
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input.dim() not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {input.dim()}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.word}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = input.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    with grad_mode.no_grad():
        p = (input if input.dim() == 2 else input.unsqueeze(0)).float()
        # PyTorch's checks: finite, non-negative, a positive sum per row (read back once)
        lo, hi, row_min = p.min().item(), p.max().item(), p.sum(-1).min().item()
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo < 0:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if row_min <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if replacement:
            cdf = p.cumsum(-1)
            total = cdf[:, -1:]
            u = _uniform_like(p.new_empty((p.shape[0], num_samples)), generator) * total
            idx = searchsorted(cdf.contiguous(), u.contiguous(), right=True).clamp_(max=n_cat - 1)
        else:
            # PyTorch's exponential race: argtop-k of p / E with E ~ Exp(1)
            e = -(1 - _uniform_like(p, generator)).log()
            keys = p / e
            idx = keys.topk(num_samples, dim=-1).indices
        return idx if input.dim() == 2 else idx.squeeze(0)


@define("bernoulli", "other", differentiable=False,
        doc="bernoulli(input, p=None, *, generator=None) -> Tensor\n\n"
            "Draws 0/1 with probabilities `input` (or the scalar `p`), in input's dtype.")
def bernoulli(input, p=None, *, generator=None, out=None):
    if p is None and not input.dtype.is_floating_point:   # (the probabilities must be floats)
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{input.dtype.word}'")
    prob = input if p is None else p
    _check_p(prob)
    with grad_mode.no_grad():
        u = _uniform_like(input, generator, D.float32)
        return (u < prob).to(input.dtype)


def _check_p(p):
    """PyTorch's check of bernoulli's p: a number now, a tensor's elements on the device (on
    webgpu raised at the next readback, as poisson's rates: no sync here)."""
    if not is_tensor(p):
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        return
    if p.numel():
        with grad_mode.no_grad():   # NaN is outside too
            bad = ((p >= 0) & (p <= 1)).logical_not().contiguous()
        backend_for(p.device.type).device_assert(bad, "bernoulli", RuntimeError,
                                                 "Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


@define("bernoulli_", "other", torch=False, differentiable=False,
        doc="Tensor.bernoulli_(p=0.5, *, generator=None) -> Tensor\n\nFills self with 0/1 draws.")
def bernoulli_(self, p=0.5, *, generator=None):
    _check_p(p)
    with grad_mode.no_grad():
        u = _uniform_like(self, generator, D.float32)
        return self.copy_((u < p).to(self.dtype))


def _float_check(self, name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point tensor, got {self.dtype.word}")


def _positive(self, name, param, value):
    """The checks the samplers with a scale make: a floating self and a positive scale."""
    _float_check(self, name)
    if value <= 0:
        raise RuntimeError(f"{name} expects {param} > 0.0, but found {param}={value}")


@define("exponential_", "other", dtypes="floating", torch=False, differentiable=False,
        doc="Tensor.exponential_(lambd=1, *, generator=None) -> Tensor\n\n"
            "Fills self with draws of Exp(lambd).")
def exponential_(self, lambd=1.0, *, generator=None):
    _positive(self, "exponential_", "lambda", lambd)
    with grad_mode.no_grad():
        u = _uniform_like(self, generator, D.float32)
        return self.copy_(-(1 - u).log() / lambd)


@define("log_normal_", "other", dtypes="floating", torch=False, differentiable=False,
        doc="Tensor.log_normal_(mean=1, std=2, *, generator=None) -> Tensor\n\n"
            "Fills self with exp(N(mean, std)) draws.")
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    _positive(self, "log_normal_", "std", std)
    with grad_mode.no_grad():
        return self.normal_(mean, std, generator=generator).exp_()


@define("cauchy_", "other", dtypes="floating", torch=False, differentiable=False,
        doc="Tensor.cauchy_(median=0, sigma=1, *, generator=None) -> Tensor\n\n"
            "Fills self with Cauchy(median, sigma) draws.")
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _positive(self, "cauchy_", "sigma", sigma)
    with grad_mode.no_grad():
        u = _uniform_like(self, generator, D.float32)
        return self.copy_(median + sigma * ((u - 0.5) * math.pi).tan())


@define("geometric_", "other", torch=False, differentiable=False,
        doc="Tensor.geometric_(p, *, generator=None) -> Tensor\n\n"
            "Fills self with the number of Bernoulli(p) trials up to the first success.")
def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    with grad_mode.no_grad():
        u = _uniform_like(self, generator, D.float32)
        return self.copy_((u.log() / math.log1p(-p)).ceil().clamp_(min=1))


@define("normal", "other", dtypes="floating", method=False,
        doc="normal(mean, std=1.0, size=None, *, generator=None) -> Tensor\n\n"
            "Draws from N(mean, std); mean and std may be tensors (broadcast) or numbers (then "
            "`size` gives the shape). Differentiable in tensor mean and std.")
def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    _options("normal", layout)
    if out is not None:
        ref = mean if is_tensor(mean) else std if is_tensor(std) else None
        r = normal(mean, std, size, generator=generator, dtype=dtype or (out.dtype if ref is None else None),
                   device=device or (out.device if ref is None else None), requires_grad=requires_grad)
        return write_out(r, out, "normal")
    if not is_tensor(mean) and not is_tensor(std):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with a "
                            "float mean and std, `size` is required")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        t = randn(size, generator=generator, dtype=dtype, device=device)
        with grad_mode.no_grad():
            t = t * std + mean
        return t.requires_grad_(requires_grad) if requires_grad else t
    ref = mean if is_tensor(mean) else std
    if is_tensor(std):
        with grad_mode.no_grad():
            if (std < 0).any().item():
                raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shape = ref.shape
    if is_tensor(mean) and is_tensor(std):
        shape = broadcast_shapes(mean.shape, std.shape)
    noise = empty(shape, dtype=ref.dtype, device=ref.device).normal_(0.0, 1.0, generator=generator)
    return mean + std * noise
