"""torch.distributions: probability distributions with sampling (reparameterized where PyTorch
is), log_prob, entropy and moments, their constraints and transforms, and kl_divergence.

Written from torchweb's tensor ops, so autograd differentiates rsample, log_prob and the rest
on every device. Families not written yet are refused with their reason (torchweb/_refused.py)."""

from . import constraints, transforms  # noqa: F401
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfCauchy, HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from . import kl_basic  # noqa: F401  (registers the basic families' KL pairs)
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform

from .._refused import module_getattr as _module_getattr

__getattr__ = _module_getattr("distributions", __name__)

__all__ = ["Bernoulli", "Binomial", "Categorical", "Cauchy", "Distribution", "Exponential",
           "ExponentialFamily", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
           "Laplace", "LogNormal", "Multinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "TransformedDistribution", "Uniform",
           "biject_to", "kl_divergence", "register_kl", "transform_to"] + transforms.__all__
