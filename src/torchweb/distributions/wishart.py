"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the distribution of L N N^T L^T
for N from the Bartlett decomposition (chi2 diagonal, normal below), over the distributions'
Cholesky helper for log-determinants and solves."""

import math
import warnings

import torchweb as torch

from . import constraints
from .cholesky import cholesky, cholesky_info, solve_lower
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import ScaleTrilMatrices
from .utils import _standard_normal

__all__ = ["Wishart"]

_LOG_2 = math.log(2)
MAX_TRY_CORRECTION = 10


def _mvdigamma(x, p):
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return torch.digamma(x.unsqueeze(-1) - torch.arange(p, dtype=x.dtype, device=x.device) / 2).sum(-1)


def _log_det(matrix):
    """log det of a batch of positive-definite matrices."""
    return 2 * cholesky(matrix).diagonal(dim1=-2, dim2=-1).log().sum(-1)


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if torch.is_tensor(df):
            batch_shape = torch.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(batch_shape)
        else:
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = "scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None \
            else "precision_matrix"
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._set_scale_tril(covariance_matrix, precision_matrix, scale_tril)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        p = self._event_shape[-1]
        steps = torch.arange(p, dtype=self._unbroadcasted_scale_tril.dtype, device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        self._expand_matrices(new, cov_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, torch.full_like(factor, float("nan")), factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_v = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        shape = tuple(sample_shape) + self._matrix_shape()
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=torch.finfo(self.df.dtype).eps)
        noise = _standard_normal(shape, self.df.dtype, self.df.device).tril(-1) + chi.diag_embed(dim1=-2, dim2=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=torch.Size(), max_try_correction=None):
        """Draws; singular ones (possible for df < ndim) are drawn again, up to
        max_try_correction rounds."""
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = cholesky_info(sample) != 0
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(MAX_TRY_CORRECTION if max_try_correction is None else max_try_correction):
                sample = torch.where(singular[..., None, None], self._bartlett_sampling(sample_shape), sample)
                singular = cholesky_info(sample) != 0
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # trace(Sigma^-1 V) = trace(L^-1 V L^-T)
        inner = solve_lower(L, solve_lower(L, value).mT)
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * _log_det(value) - inner.diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return (-self.precision_matrix / 2, (self.df - p - 1) / 2)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-_log_det(-2 * x) + _LOG_2 * p) + torch.mvlgamma(y + (p + 1) / 2, p=p)
