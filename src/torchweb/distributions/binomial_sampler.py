"""Binomial draws from tensor ops, as PyTorch samples them: with p the smaller of probs and
1 - probs (and the draw mirrored when it is 1 - probs), an inverse-CDF table where n p < 10, and
Hörmann's transformed rejection with squeeze (BTRS, 1993) in bounded rounds over the entries not
yet accepted otherwise. BTRS's acceptance bound is a sum of log ratios and Stirling tails, which
float32 keeps precise."""

import math

import torchweb as torch

from .discrete_sampling import sample_by_cdf_table
from .utils import _standard_uniform

BTRS_MIN_MEAN = 10.0
MAX_ROUNDS = 40
CHECK_EVERY = 4
# log k! - (Stirling's formula for it), k = 0..9 (PyTorch's table)
_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
         0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287]


def _stirling_tail(k):
    table = torch.tensor(_TAIL, dtype=k.dtype, device=k.device)
    small = table[k.clamp(0, 9).to(torch.int64)]
    kp1sq = (k + 1) ** 2
    large = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return torch.where(k <= 9, small, large)


def _btrs(n, p):
    """Draws for n p >= BTRS_MIN_MEAN, p <= 1/2 (detached tensors)."""
    stddev = torch.sqrt(n * p * (1 - p))
    c = n * p + 0.5
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    alpha = (2.83 + 5.1 / b) * stddev
    r = p / (1 - p)
    m = torch.floor((n + 1) * p)
    v_r = 0.92 - 4.2 / b
    fixed = ((m + 0.5) * torch.log((m + 1) / (r * (n - m + 1))) + _stirling_tail(m) + _stirling_tail(n - m))
    result = torch.zeros_like(n)
    pending = torch.ones_like(n, dtype=torch.bool)
    for round_ in range(1, MAX_ROUNDS + 1):
        u = _standard_uniform(n.shape, n.dtype, n.device) - 0.5
        v = _standard_uniform(n.shape, n.dtype, n.device)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a / us + b) * u + c)
        in_range = (k >= 0) & (k <= n)
        kc = k.clamp(min=0)
        kc = torch.where(in_range, kc, torch.zeros_like(kc))
        bound = (fixed + (n + 1) * torch.log((n - m + 1) / (n - kc + 1))
                 + (kc + 0.5) * torch.log(r * (n - kc + 1) / (kc + 1)) - _stirling_tail(kc) - _stirling_tail(n - kc))
        log_v = torch.log(v * alpha / (a / (us * us) + b))
        accept = in_range & (((us >= 0.07) & (v <= v_r)) | (log_v <= bound)) & pending
        result = torch.where(accept, k, result)
        pending = pending & ~accept
        if round_ % CHECK_EVERY == 0 and not bool(pending.any()):
            return result
    if bool(pending.any()):
        raise RuntimeError(f"Binomial sampler: draws still rejected after {MAX_ROUNDS} rounds")
    return result


def _by_table(n, p):
    """Draws for n p < BTRS_MIN_MEAN: the table covers the mass up to 12 sd above the mean. log of
    n! / (n - k)! is a running sum of log(n - j), precise in float32 for large n (a difference of
    lgammas would not be)."""
    top = float(n.max()) if n.numel() else 0.0
    size = int(min(top, BTRS_MIN_MEAN + 12 * math.sqrt(BTRS_MIN_MEAN) + 20)) + 1
    k = torch.arange(size, dtype=n.dtype, device=n.device)
    n1, p1 = n.unsqueeze(-1), p.unsqueeze(-1)
    falling = torch.log((n1 - k[:-1]).clamp(min=1)).cumsum(-1)
    log_falling = torch.cat([torch.zeros_like(n1), falling], -1)
    log_pmf = log_falling - torch.lgamma(k + 1) + k.xlogy(p1) + (n1 - k).clamp(min=0) * torch.log1p(-p1)
    log_pmf = torch.where(k <= n1, log_pmf, torch.full_like(log_pmf, float("-inf")))
    return sample_by_cdf_table(log_pmf)


def sample_binomial(n, probs):
    """Draws of Binomial(n, probs), elementwise (n and probs of one shape), as floats."""
    with torch.no_grad():
        n, probs = n.detach(), probs.detach()
        flip = probs > 0.5
        p = torch.where(flip, 1 - probs, probs)
        large = n * p >= BTRS_MIN_MEAN
        draws = _by_table(torch.where(large, torch.zeros_like(n), n), torch.where(large, torch.zeros_like(p), p))
        if bool(large.any()):
            safe_n = torch.where(large, n, torch.full_like(n, 2 * BTRS_MIN_MEAN))
            safe_p = torch.where(large, p, torch.full_like(p, 0.5))
            draws = torch.where(large, _btrs(safe_n, safe_p), draws)
        draws = torch.where(flip, n - draws, draws)
        return torch.where((n <= 0) | (probs <= 0), torch.zeros_like(draws),
                           torch.where(probs >= 1, n, draws))
