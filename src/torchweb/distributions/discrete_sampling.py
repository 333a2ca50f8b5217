"""Sampling a discrete distribution on 0..K-1 from its log-pmf table (a composite of tensor ops:
one uniform per draw compared with the cumulative sums).

Binomial, and Poisson below rate 10 (poisson_sampler.py), draw this way: exact up to float32
rounding of the cumulative sums, at a cost of K values per draw, so Binomial.sample() bounds K
(a rejection sampler for large counts is issue 20's item)."""

from .utils import _standard_uniform


def sample_by_cdf_table(log_pmf):
    """Draws of shape log_pmf.shape[:-1]: the index k with cdf[k-1] <= u < cdf[k]."""
    cdf = log_pmf.exp().cumsum(-1)
    u = _standard_uniform(tuple(log_pmf.shape[:-1]), log_pmf.dtype, log_pmf.device)
    u = u * cdf[..., -1]  # the table's own total (the truncated tail is below float32 rounding)
    return (u.unsqueeze(-1) >= cdf).sum(-1).clamp(max=log_pmf.shape[-1] - 1).to(log_pmf.dtype)
