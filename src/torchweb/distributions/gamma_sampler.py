"""Standard gamma draws (rate 1) with implicit reparameterization gradients.

Sampling is the backends' rejection sampler (ops/samplers.py: Marsaglia and Tsang's method, a
thread per draw, alpha < 1 boosted by u^(1/alpha), as PyTorch's; no readback).

Gradient (implicit reparameterization, Figurnov et al. 2018, as PyTorch's): with F(x; alpha)
the gamma CDF, dx/dalpha = -(dF/dalpha) / (dF/dx), dF/dx being the density. Below and around
alpha it is a series over the lower incomplete gamma's terms, in the upper tail a Gauss-Laguerre
quadrature of the upper one (both divided by the density analytically, so nothing underflows);
past SERIES_MAX_ALPHA the Wilson-Hilferty transform gives it, within about 1e-2 relative in the
tails there (PyTorch uses a saddle-point approximation for large alpha). The series' length is
read back once from the largest draw."""

import math

import torchweb as torch
from ..ops.samplers import standard_gamma as _draw

SERIES_MAX_ALPHA = 128.0
SERIES_BLOCK = 64


def sample_standard_gamma(alpha):
    """Draws of Gamma(alpha, 1), alpha > 0, not differentiable (see standard_gamma)."""
    return _draw(alpha.detach())


def _laguerre_rule(n=32):
    """Gauss-Laguerre nodes and weights (integral of f(s) e^-s over s > 0), by Newton's method
    on the Laguerre polynomial (Numerical Recipes' gaulag)."""
    nodes, weights = [], []
    z = 0.0
    for i in range(n):
        if i == 0:
            z = 3.0 / (1.0 + 2.4 * n)
        elif i == 1:
            z += 15.0 / (1.0 + 2.5 * n)
        else:
            z += (1.0 + 2.55 * (i - 1)) / (1.9 * (i - 1)) * (z - nodes[i - 2])
        for _ in range(100):
            p1, p2 = 1.0, 0.0
            for j in range(n):
                p1, p2 = ((2 * j + 1 - z) * p1 - j * p2) / (j + 1), p1
            pp = n * (p1 - p2) / z
            z, previous = z - p1 / pp, z
            if abs(z - previous) <= 1e-14 * abs(z):
                break
        nodes.append(z)
        weights.append(-1.0 / (pp * n * p2))
    return nodes, weights


_RULE = _laguerre_rule()


def _grad_by_series(x, alpha):
    """-dF/dalpha / density as sum_n r_n (digamma(alpha + n + 1) - log x), with r_n = t_n / density
    = x^(n+1) Gamma(alpha) / Gamma(alpha + n + 1): for x not far above alpha. Summed in blocks
    of SERIES_BLOCK terms, so memory stays a small multiple of the draws'."""
    log_x = x.clamp(min=torch.finfo(x.dtype).tiny).log().unsqueeze(-1)
    lgamma_alpha = torch.lgamma(alpha).unsqueeze(-1)
    top = float(x.max()) if x.numel() else 0.0
    terms = int(top + 8.0 * math.sqrt(top) + 40)
    total = torch.zeros_like(x)
    for start in range(0, terms, SERIES_BLOCK):
        n = torch.arange(start, min(start + SERIES_BLOCK, terms), dtype=x.dtype, device=x.device)
        a_n1 = alpha.unsqueeze(-1) + n + 1
        log_r = (n + 1) * log_x + lgamma_alpha - torch.lgamma(a_n1)
        total = total + (log_r.exp() * (torch.digamma(a_n1) - log_x)).sum(-1)
    return total


def _grad_by_quadrature(x, alpha):
    """The same from the upper tail: dQ/dalpha / density = sum_i w_i ((x + s_i)/x)^(alpha-1)
    (log(x + s_i) - digamma(alpha)), for x well above alpha (the integrand then decays)."""
    s = torch.tensor(_RULE[0], dtype=x.dtype, device=x.device)
    w = torch.tensor(_RULE[1], dtype=x.dtype, device=x.device)
    xs = x.unsqueeze(-1) + s
    shape = (alpha.unsqueeze(-1) - 1) * torch.log(xs / x.unsqueeze(-1))
    return (w * shape.exp() * (xs.log() - torch.digamma(alpha).unsqueeze(-1))).sum(-1)


def _grad_by_wilson_hilferty(x, alpha):
    """x = alpha w^3, w = 1 - 1/(9 alpha) + z / (3 sqrt(alpha)), differentiated with z fixed."""
    w = (x / alpha).pow(1.0 / 3.0)
    z = (w - 1 + 1 / (9 * alpha)) * 3 * alpha.sqrt()
    dw = 1 / (9 * alpha * alpha) - z / (6 * alpha.pow(1.5))
    return w ** 3 + 3 * alpha * w * w * dw


def standard_gamma_grad(x, alpha):
    """dx/dalpha at draws x of Gamma(alpha, 1) (detached tensors)."""
    large = alpha > SERIES_MAX_ALPHA
    upper = ~large & (x > torch.clamp(2 * (alpha - 1), min=1.0))
    one = torch.ones_like(x)
    series = _grad_by_series(torch.where(upper | large, one, x), torch.where(large, one, alpha))
    tail = _grad_by_quadrature(torch.where(upper, x, one + 1), torch.where(upper, alpha, one))
    wilson = _grad_by_wilson_hilferty(x, alpha)
    return torch.where(large, wilson, torch.where(upper, tail, series))


def standard_gamma(alpha):
    """Draws of Gamma(alpha, 1) whose gradient with respect to alpha is the implicit
    reparameterization one (the draw's value, plus (alpha - alpha.detach()) * dx/dalpha)."""
    x = sample_standard_gamma(alpha)
    if not alpha.requires_grad:
        return x
    with torch.no_grad():
        dx = standard_gamma_grad(x, alpha.detach())
        dx = torch.where(torch.isfinite(dx), dx, torch.zeros_like(dx))  # 0 * nan would spoil the draw
    return x + (alpha - alpha.detach()) * dx
