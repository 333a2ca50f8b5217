"""Standard gamma draws (rate 1) from tensor ops: Marsaglia and Tsang's rejection method in
bounded rounds, with implicit reparameterization gradients.

Sampling: for alpha >= 1, d = alpha - 1/3, c = 1/sqrt(9d); a normal x gives v = (1 + c x)^3,
accepted when log u < x^2/2 + d - d v + d log v (about 95% per round and more for large alpha);
alpha < 1 draws with alpha + 1 and multiplies by u^(1/alpha). Each round draws for every entry
and fills those still pending; rounds stop when none is pending (checked every few rounds, one
readback each), at most MAX_ROUNDS.

Gradient (implicit reparameterization, Figurnov et al. 2018, as PyTorch's): with F(x; alpha)
the gamma CDF, dx/dalpha = -(dF/dalpha) / (dF/dx), dF/dx being the density. Below and around
alpha it is a series over the lower incomplete gamma's terms, in the upper tail a Gauss-Laguerre
quadrature of the upper one (both divided by the density analytically, so nothing underflows);
past SERIES_MAX_ALPHA the Wilson-Hilferty transform gives it, within about 1e-2 relative in the
tails there (PyTorch uses a saddle-point approximation for large alpha)."""

import math

import torchweb as torch

from .utils import _standard_normal, _standard_uniform

MAX_ROUNDS = 40
CHECK_EVERY = 4
SERIES_MAX_ALPHA = 128.0
SERIES_BLOCK = 64


def _marsaglia_tsang(alpha):
    """Draws of Gamma(alpha, 1) for alpha >= 1 (a detached tensor)."""
    d = alpha - 1.0 / 3.0
    c = (9.0 * d).rsqrt()
    result = torch.zeros_like(alpha)
    pending = torch.ones_like(alpha, dtype=torch.bool)
    for round_ in range(1, MAX_ROUNDS + 1):
        x = _standard_normal(alpha.shape, alpha.dtype, alpha.device)
        u = _standard_uniform(alpha.shape, alpha.dtype, alpha.device)
        v = (1.0 + c * x) ** 3
        log_v = torch.log(v.clamp(min=torch.finfo(alpha.dtype).tiny))
        accept = (v > 0) & (torch.log(u) < 0.5 * x * x + d - d * v + d * log_v) & pending
        result = torch.where(accept, d * v, result)
        pending = pending & ~accept
        if round_ % CHECK_EVERY == 0 and not bool(pending.any()):
            return result
    if bool(pending.any()):
        raise RuntimeError(f"standard gamma sampler: draws still rejected after {MAX_ROUNDS} rounds "
                           "(concentration not finite or not positive?)")
    return result


def sample_standard_gamma(alpha):
    """Draws of Gamma(alpha, 1), alpha > 0, not differentiable (see standard_gamma)."""
    with torch.no_grad():
        alpha = alpha.detach()
        small = alpha < 1
        draws = _marsaglia_tsang(torch.where(small, alpha + 1, alpha))
        u = _standard_uniform(alpha.shape, alpha.dtype, alpha.device)
        boost = torch.where(small, u.pow(1.0 / alpha), torch.ones_like(alpha))
        return (draws * boost).clamp(min=torch.finfo(alpha.dtype).tiny)


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
