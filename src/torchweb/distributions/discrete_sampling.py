"""Sampling a discrete distribution on 0..K-1 from its log-pmf table (a composite of tensor ops:
one uniform per draw compared with the cumulative sums).

Poisson below rate 10 and Binomial below mean 10 draw this way (poisson_sampler.py,
binomial_sampler.py): exact up to float32 rounding of the cumulative sums, at a cost of K values
per draw; rejection samplers take the larger ones."""

from .utils import _standard_uniform


def sample_by_cdf_table(log_pmf):
    """Draws of shape log_pmf.shape[:-1]: the index k with cdf[k-1] <= u < cdf[k]."""
    cdf = log_pmf.exp().cumsum(-1)
    u = _standard_uniform(tuple(log_pmf.shape[:-1]), log_pmf.dtype, log_pmf.device)
    u = u * cdf[..., -1]  # the table's own total (the truncated tail is below float32 rounding)
    return (u.unsqueeze(-1) >= cdf).sum(-1).clamp(max=log_pmf.shape[-1] - 1).to(log_pmf.dtype)
