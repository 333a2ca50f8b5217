"""distributions.transforms, constraints and constraint_registry against PyTorch's: forward,
inverse, log|det J|, shapes, and biject_to / transform_to for each constraint."""

import pytest
import torch

import torchweb
from oracle import assert_close, ours

D = torchweb.distributions
TD = torch.distributions

TRANSFORMS = {
    "Exp": lambda M: M.transforms.ExpTransform(),
    "Power": lambda M: M.transforms.PowerTransform(M_tensor(M, [2.0, 0.5])),
    "Sigmoid": lambda M: M.transforms.SigmoidTransform(),
    "Softplus": lambda M: M.transforms.SoftplusTransform(),
    "Tanh": lambda M: M.transforms.TanhTransform(),
    "Affine": lambda M: M.transforms.AffineTransform(M_tensor(M, [1.0, -2.0]), M_tensor(M, [0.5, 3.0])),
    "Affine(event_dim=1)": lambda M: M.transforms.AffineTransform(1.0, M_tensor(M, [0.5, -3.0]), event_dim=1),
    "Compose": lambda M: M.transforms.ComposeTransform([M.transforms.AffineTransform(0.5, 2.0),
                                                        M.transforms.ExpTransform()]),
    "Softmax": lambda M: M.transforms.SoftmaxTransform(),
    "StickBreaking": lambda M: M.transforms.StickBreakingTransform(),
    "Independent": lambda M: M.transforms.IndependentTransform(M.transforms.ExpTransform(), 1),
    "Reshape": lambda M: M.transforms.ReshapeTransform((2,), (2, 1)),
    "Exp.inv": lambda M: M.transforms.ExpTransform().inv,
    "LowerCholesky": lambda M: M.transforms.LowerCholeskyTransform(),
    "CorrCholesky": lambda M: M.transforms.CorrCholeskyTransform(),
    "Cat": lambda M: M.transforms.CatTransform([M.transforms.ExpTransform(), M.transforms.TanhTransform()], 1, [1, 1]),
    "Stack": lambda M: M.transforms.StackTransform([M.transforms.ExpTransform(), M.transforms.SigmoidTransform()], 1),
}
_DEVICE = ["cpu"]


def M_tensor(M, values):
    return torch.tensor(values) if M is TD else ours(torch.tensor(values), _DEVICE[0])


def _input(name):
    if name == "LowerCholesky":
        return torch.tensor([[[0.3, 0.0], [0.5, -0.2]], [[1.0, 0.0], [0.1, 0.4]]])
    if name == "CorrCholesky":
        return torch.tensor([[0.3], [-0.8]])
    if name == "Exp.inv":
        return torch.tensor([[0.3, 1.7], [2.0, 0.1]])
    return torch.tensor([[0.3, -0.7], [1.2, 0.1]])


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_pytorch(name, device):
    _DEVICE[0] = device
    theirs, mine = TRANSFORMS[name](TD), TRANSFORMS[name](D)
    x = _input(name)
    wx = ours(x, device)
    y, wy = theirs(x), mine(wx)
    assert_close(wy, y, rtol=1e-5, atol=1e-6)
    if name not in ("Softmax",):  # not bijective: PyTorch's inverse is one representative
        assert_close(mine.inv(wy), theirs.inv(y), rtol=1e-4, atol=1e-5)
    if name not in ("LowerCholesky", "Softmax"):
        assert_close(mine.log_abs_det_jacobian(wx, wy), theirs.log_abs_det_jacobian(x, y), rtol=1e-4, atol=1e-5)
    assert tuple(mine.forward_shape(tuple(x.shape))) == tuple(theirs.forward_shape(x.shape))
    assert mine.bijective == theirs.bijective
    assert repr(mine.domain) == repr(theirs.domain) and repr(mine.codomain) == repr(theirs.codomain)


def test_transform_cache_and_equality():
    t = D.transforms.ExpTransform(cache_size=1)
    x = torchweb.tensor([0.5, 1.0])
    y = t(x)
    assert t.inv(y) is x
    assert D.transforms.ExpTransform() == D.transforms.ExpTransform()
    assert D.transforms.AffineTransform(1.0, 2.0) == D.transforms.AffineTransform(1.0, 2.0)
    assert D.transforms.AffineTransform(1.0, 2.0) != D.transforms.AffineTransform(1.0, 3.0)
    assert D.transforms.ExpTransform().inv.inv == D.transforms.ExpTransform()
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.transforms.ExpTransform(cache_size=2)


CONSTRAINTS = {
    "real": lambda C: C.real, "positive": lambda C: C.positive, "nonnegative": lambda C: C.nonnegative,
    "greater_than": lambda C: C.greater_than(1.5), "less_than": lambda C: C.less_than(-0.5),
    "unit_interval": lambda C: C.unit_interval, "interval": lambda C: C.interval(-1.0, 3.0),
    "half_open_interval": lambda C: C.half_open_interval(0.0, 2.0), "simplex": lambda C: C.simplex,
    "real_vector": lambda C: C.real_vector, "lower_cholesky": lambda C: C.lower_cholesky,
    "corr_cholesky": lambda C: C.corr_cholesky, "positive_definite": lambda C: C.positive_definite,
}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraint_registry_matches_pytorch(name, registry, device):
    try:
        theirs = getattr(TD, registry)(CONSTRAINTS[name](TD.constraints))
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)[:30]):
            getattr(D, registry)(CONSTRAINTS[name](D.constraints))
        return
    mine = getattr(D, registry)(CONSTRAINTS[name](D.constraints))
    assert type(mine).__name__ == type(theirs).__name__
    x = {"lower_cholesky": torch.tensor([[0.3, 0.0], [0.5, -0.2]]), "positive_definite": torch.tensor([[0.3, 0.0], [0.5, -0.2]]),
         "corr_cholesky": torch.tensor([0.4])}.get(name, torch.tensor([0.3, -0.7, 1.2]))
    y = theirs(x)
    wy = mine(ours(x, device))
    assert_close(wy, y, rtol=1e-5, atol=1e-6)
    assert bool(CONSTRAINTS[name](D.constraints).check(wy).all())


CHECKS = [
    ("boolean", lambda C: C.boolean, [0.0, 1.0, 0.5]), ("nonnegative_integer", lambda C: C.nonnegative_integer, [0.0, 2.0, -1.0, 1.5]),
    ("integer_interval", lambda C: C.integer_interval(0, 3), [0.0, 3.0, 4.0, 1.5]),
    ("positive", lambda C: C.positive, [1.0, 0.0, -1.0]), ("real", lambda C: C.real, [1.0, float("nan")]),
    ("simplex", lambda C: C.simplex, [[0.5, 0.5], [0.7, 0.7]]), ("one_hot", lambda C: C.one_hot, [[0.0, 1.0], [1.0, 1.0]]),
    ("independent", lambda C: C.independent(C.positive, 1), [[1.0, 2.0], [1.0, -2.0]]),
    ("lower_triangular", lambda C: C.lower_triangular, [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 1.0], [2.0, 1.0]]]),
    ("symmetric", lambda C: C.symmetric, [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 1.0], [2.0, 1.0]]]),
    ("positive_definite", lambda C: C.positive_definite, [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("multinomial", lambda C: C.multinomial(3), [[1.0, 2.0], [2.0, 2.0]]),
]


@pytest.mark.parametrize("name,make,values", CHECKS, ids=[c[0] for c in CHECKS])
def test_constraint_checks_match_pytorch(name, make, values, device):
    t = torch.tensor(values)
    assert_close(make(D.constraints).check(ours(t, device)), make(TD.constraints).check(t))
    assert repr(make(D.constraints)) == repr(make(TD.constraints))
    assert make(D.constraints).event_dim == make(TD.constraints).event_dim
    assert make(D.constraints).is_discrete == make(TD.constraints).is_discrete


def test_transformed_distribution_matches_pytorch(device):
    loc, scale = torch.tensor([0.2, -0.5]), torch.tensor([0.7, 1.3])
    theirs = TD.TransformedDistribution(TD.Normal(loc, scale), [TD.transforms.TanhTransform(),
                                                               TD.transforms.AffineTransform(1.0, 2.0)])
    mine = D.TransformedDistribution(D.Normal(ours(loc, device), ours(scale, device)),
                                     [D.transforms.TanhTransform(), D.transforms.AffineTransform(1.0, 2.0)])
    v = torch.tensor([0.5, 2.2])
    assert_close(mine.log_prob(ours(v, device)), theirs.log_prob(v), rtol=1e-5, atol=1e-5)
    assert_close(mine.cdf(ours(v, device)), theirs.cdf(v), rtol=1e-5, atol=1e-5)
    x = mine.rsample((1000,))
    assert tuple(x.shape) == (1000, 2) and bool(((x > -1) & (x < 3)).all())
    flipped = D.TransformedDistribution(D.Normal(ours(loc, device), ours(scale, device)), D.transforms.AffineTransform(0.0, -1.0))
    theirs_flipped = TD.TransformedDistribution(TD.Normal(loc, scale), TD.transforms.AffineTransform(0.0, -1.0))
    assert_close(flipped.cdf(ours(v, device)), theirs_flipped.cdf(v), rtol=1e-5, atol=1e-5)
    # a vector event from a scalar base (StickBreaking over an Independent Normal)
    base = D.Independent(D.Normal(ours(torch.zeros(3, 2), device), 1.0), 1)
    simplex = D.TransformedDistribution(base, D.transforms.StickBreakingTransform())
    their_simplex = TD.TransformedDistribution(TD.Independent(TD.Normal(torch.zeros(3, 2), 1.0), 1),
                                               TD.transforms.StickBreakingTransform())
    assert tuple(simplex.batch_shape) == (3,) and tuple(simplex.event_shape) == (3,)
    s = torch.tensor([[0.2, 0.3, 0.5]] * 3)
    assert_close(simplex.log_prob(ours(s, device)), their_simplex.log_prob(s), rtol=1e-4, atol=1e-5)


def test_more_transforms_match_pytorch(device):
    x = torch.tensor([[0.3, -0.7], [1.2, 0.1]])
    wx = ours(x, device)
    assert_close(D.transforms.AbsTransform()(wx), TD.transforms.AbsTransform()(x))
    assert_close(D.transforms.identity_transform(wx), TD.transforms.identity_transform(x))
    assert_close(D.transforms.identity_transform.log_abs_det_jacobian(wx, wx),
                 TD.transforms.identity_transform.log_abs_det_jacobian(x, x))
    cdf_t = D.transforms.CumulativeDistributionTransform(D.Normal(ours(torch.tensor(0.0), device), 2.0))
    their_cdf_t = TD.transforms.CumulativeDistributionTransform(TD.Normal(0.0, 2.0))
    y = their_cdf_t(x)
    assert_close(cdf_t(wx), y, rtol=1e-5, atol=1e-6)
    assert_close(cdf_t.inv(ours(y, device)), x, rtol=1e-4, atol=1e-5)
    assert_close(cdf_t.log_abs_det_jacobian(wx, ours(y, device)), their_cdf_t.log_abs_det_jacobian(x, y))
    # PositiveDefiniteTransform: L L^T of the lower-Cholesky map, and back through the Cholesky helper
    m = torch.tensor([[[0.3, 0.0], [0.5, -0.2]]])
    pd, their_pd = D.transforms.PositiveDefiniteTransform(), TD.transforms.PositiveDefiniteTransform()
    assert_close(pd(ours(m, device)), their_pd(m), rtol=1e-5, atol=1e-6)
    assert_close(pd.inv(ours(their_pd(m), device)), their_pd.inv(their_pd(m)), rtol=1e-4, atol=1e-5)


def _cube_transform(M):
    """A user's Transform subclass, written against the distributions module M."""
    class Cube(M.transforms.Transform):
        domain = codomain = M.constraints.real
        bijective, sign = True, +1

        def _call(self, x):
            return x ** 3

        def _inverse(self, y):
            return y.sign() * y.abs() ** (1 / 3)

        def log_abs_det_jacobian(self, x, y):
            return (3 * x ** 2).log()
    return Cube()


def test_user_transform_subclass_works_in_a_distribution(device):
    v = torch.tensor([0.5, -2.0])
    mine = D.TransformedDistribution(D.Normal(ours(torch.zeros(2), device), 1.0), [_cube_transform(D)])
    theirs = TD.TransformedDistribution(TD.Normal(torch.zeros(2), 1.0), [_cube_transform(TD)])
    assert_close(mine.log_prob(ours(v, device)), theirs.log_prob(v), rtol=1e-4, atol=1e-5)


def test_exponential_family_entropy_by_bregman(device):
    loc, scale = torch.tensor([0.3, -1.0]), torch.tensor([0.5, 2.0])
    normal = D.Normal(ours(loc, device), ours(scale, device))
    assert isinstance(normal, D.ExponentialFamily)
    assert_close(D.ExponentialFamily.entropy(normal), TD.ExponentialFamily.entropy(TD.Normal(loc, scale)),
                 rtol=1e-5, atol=1e-5)
    rate = torch.tensor([0.5, 3.0])
    assert_close(D.ExponentialFamily.entropy(D.Exponential(ours(rate, device))),
                 TD.Exponential(rate).entropy(), rtol=1e-5, atol=1e-5)
