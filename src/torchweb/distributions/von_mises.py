"""VonMises(loc, concentration): a circular distribution on [-pi, pi).

log_prob and variance use the same polynomial approximations of log I0 / log I1 as PyTorch;
sample() is Best and Fisher's rejection method in float32 (PyTorch computes it in float64),
with the proposal's parameter written without the cancellation float32 would suffer for small
concentrations, in bounded rounds over the entries not yet accepted."""

import math

import torchweb as torch

from . import constraints
from .distribution import Distribution, expanded
from .loc_scale import CenteredOnLoc
from .utils import _standard_uniform, broadcast_all, lazy_property

__all__ = ["VonMises"]

MAX_ROUNDS = 64
CHECK_EVERY = 4

_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
                  -0.01647633, 0.00392377]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
                  0.01787654, -0.00420059]


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1 (Abramowitz and Stegun 9.8.1-9.8.4)."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small_coef, large_coef = (_I0_COEF_SMALL, _I0_COEF_LARGE) if order == 0 else (_I1_COEF_SMALL, _I1_COEF_LARGE)
    y = (x / 3.75) ** 2
    small = _eval_poly(y, small_coef)
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, large_coef).log()
    return torch.where(x < 3.75, small.log(), large)


class VonMises(CenteredOnLoc, Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return expanded(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * torch.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.detach()
        s = (1 + 4 * kappa ** 2).sqrt()
        tau = 1 + s
        # rho = (tau - sqrt(2 tau)) / (2 kappa), rewritten without cancellation
        rho = 2 * kappa * tau / ((s + 1) * (tau + (2 * tau).sqrt()))
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            loc, kappa = self.loc.detach().expand(shape), self.concentration.detach().expand(shape)
            r = self._proposal_r.expand(shape)
            x = torch.zeros(shape, dtype=loc.dtype, device=loc.device)
            pending = torch.ones(shape, dtype=torch.bool, device=loc.device)
            for round_ in range(1, MAX_ROUNDS + 1):
                u1, u2, u3 = (_standard_uniform(shape, loc.dtype, loc.device) for _ in range(3))
                z = torch.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)) & pending
                x = torch.where(accept, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
                pending = pending & ~accept
                if round_ % CHECK_EVERY == 0 and not bool(pending.any()):
                    break
            else:
                if bool(pending.any()):
                    raise RuntimeError(f"VonMises.sample: draws still rejected after {MAX_ROUNDS} rounds")
            return torch.remainder(x + math.pi + loc, 2 * math.pi) - math.pi

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
