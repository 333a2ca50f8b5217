"""Poisson draws from tensor ops: an inverse-CDF table for rates below PTRS_MIN_RATE, and
Hörmann's transformed rejection with squeeze (PTRS, 1993; PyTorch's method for rates >= 10) in
bounded rounds over the entries not yet accepted for the others.

PTRS's acceptance test compares log V with the log pmf at the proposed k. Written directly,
k log(rate) - rate - lgamma(k + 1) cancels terms of size k log k, too coarse in float32 for large
rates; here it is -rate h((k - rate) / rate) - log(2 pi k) / 2 - (Stirling's correction), with
h(d) = (1 + d) log1p(d) - d, whose terms stay small."""

import math

import torchweb as torch

from .discrete_sampling import sample_by_cdf_table
from .utils import _standard_uniform

PTRS_MIN_RATE = 10.0
MAX_ROUNDS = 40
CHECK_EVERY = 4
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_pmf(k, rate):
    """log P(K = k) for K ~ Poisson(rate), accurate in float32 for large rate and k."""
    direct = k * torch.log(rate) - rate - torch.lgamma(k + 1)
    big_k = k.clamp(min=PTRS_MIN_RATE)
    d = (big_k - rate) / rate
    stirling = 1 / (12 * big_k) - 1 / (360 * big_k ** 3)
    stable = -rate * ((1 + d) * torch.log1p(d) - d) - 0.5 * torch.log(big_k) - _HALF_LOG_2PI - stirling
    return torch.where(k >= PTRS_MIN_RATE, stable, direct)


def _ptrs(rate):
    """Draws for rates >= PTRS_MIN_RATE (a detached tensor)."""
    slam = rate.sqrt()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = torch.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2)
    result = torch.zeros_like(rate)
    pending = torch.ones_like(rate, dtype=torch.bool)
    for round_ in range(1, MAX_ROUNDS + 1):
        u = _standard_uniform(rate.shape, rate.dtype, rate.device) - 0.5
        v = _standard_uniform(rate.shape, rate.dtype, rate.device)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a / us + b) * u + rate + 0.43)
        squeeze = (us >= 0.07) & (v <= vr)
        possible = (k >= 0) & ~((us < 0.013) & (v > us))
        bound = torch.log(v) + log_invalpha - torch.log(a / (us * us) + b)
        accept = (squeeze | (possible & (bound <= _log_pmf(k.clamp(min=0), rate)))) & pending
        result = torch.where(accept, k, result)
        pending = pending & ~accept
        if round_ % CHECK_EVERY == 0 and not bool(pending.any()):
            return result
    if bool(pending.any()):
        raise RuntimeError(f"Poisson sampler: draws still rejected after {MAX_ROUNDS} rounds (rate not finite?)")
    return result


def sample_poisson(rate):
    """Draws of Poisson(rate), elementwise, as floats of rate's dtype."""
    with torch.no_grad():
        rate = rate.detach()
        large = rate >= PTRS_MIN_RATE
        small_rate = torch.where(large, torch.zeros_like(rate), rate)
        count = int(PTRS_MIN_RATE + 12 * PTRS_MIN_RATE ** 0.5 + 20)  # covers the mass beyond 12 sd
        k = torch.arange(count, dtype=rate.dtype, device=rate.device)
        log_pmf = k.xlogy(small_rate.unsqueeze(-1)) - small_rate.unsqueeze(-1) - (k + 1).lgamma()
        small = sample_by_cdf_table(log_pmf)
        if not bool(large.any()):
            return small
        return torch.where(large, _ptrs(torch.where(large, rate, torch.full_like(rate, PTRS_MIN_RATE))), small)
