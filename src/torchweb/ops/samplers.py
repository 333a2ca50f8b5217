"""Draws by the backends' rejection samplers (backends/base.py random_sample: a thread per
element tries until it accepts, on its own Philox counters; no readback): torch.poisson,
torch.binomial, and the standard gamma draws that torch.distributions' Gamma, Beta, Dirichlet,
Chi2, StudentT, FisherSnedecor and Wishart sample from (distributions/gamma_sampler.py). Each
call advances the generator by one call, as a fill (rand, randn) does."""

from .. import _dtype as D, _random
from .._size import broadcast_shapes
from ..autograd import grad_mode
from ..backends import backend_for
from .operands import empty
from .registry import define


def draws(kind, params, generator=None):
    """Draws of kind (gamma, poisson, binomial) at params broadcast together, in the first
    param's dtype (computed in float32)."""
    shape = broadcast_shapes(*(p.shape for p in params))
    with grad_mode.no_grad():
        values = [p.detach().to(D.float32).expand(shape).contiguous() for p in params]
        out = _random.sample(kind, empty(shape, D.float32, params[0].device), values, generator)
        return out if params[0].dtype is D.float32 else out.to(params[0].dtype)


def standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) draws (float32's smallest normal at least, as PyTorch's), not
    differentiable: distributions/gamma_sampler.py adds the implicit reparameterization."""
    return draws("gamma", [alpha], generator)


@define("poisson", "other", method=False, dtypes="floating", differentiable=False,
        doc="poisson(input, generator=None) -> Tensor\n\n"
            "Draws of Poisson(rate) at each element of `input` (the rates, non-negative), in its "
            "dtype: Knuth's product of uniforms below rate 10, Hörmann's PTRS above, as PyTorch.")
def poisson(input, generator=None):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{input.dtype.word}'")
    if input.numel():
        with grad_mode.no_grad():   # (on webgpu raised at the next readback: no sync here)
            bad = (input >= 0).logical_not().contiguous()
        backend_for(input.device.type).device_assert(bad, "poisson", RuntimeError,
                                                     "invalid Poisson rate, expected rate to be non-negative")
    return draws("poisson", [input], generator)


@define("binomial", "other", method=False, dtypes="floating", differentiable=False,
        doc="binomial(count, prob, generator=None) -> Tensor\n\n"
            "Draws of Binomial(count, prob), count and prob broadcast together, in count's dtype: "
            "inversion below a mean of 10 (of min(prob, 1 - prob)), Hörmann's BTRS above, as PyTorch.")
def binomial(count, prob, generator=None):
    for what, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {what}, got: {t.dtype.word}")
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype.word} but expected {count.dtype.word}")
    return draws("binomial", [count, prob], generator)
