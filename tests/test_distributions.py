"""torch.distributions against PyTorch's on the same parameters: log_prob, entropy, moments,
cdf/icdf, shapes and expand exactly (float32 tolerance); samples by statistics (the mean of
20k draws within a few standard errors, the support respected); on both devices."""


import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torchweb
from oracle import assert_close, ours

D = torchweb.distributions
N_DRAWS = 20000

# name: (constructor over a distributions module and parameters, parameters, values to score)
CASES = {
    "Normal": (lambda M, p: M.Normal(p["loc"], p["scale"]), {"loc": [0.3, -1.0], "scale": [0.5, 2.0]},
               [[0.1, 2.0], [-0.4, -1.0]]),
    "Uniform": (lambda M, p: M.Uniform(p["low"], p["high"]), {"low": [0.0, -2.0], "high": [1.0, 3.0]},
                [[0.25, 2.0], [0.9, -1.5]]),
    "Exponential": (lambda M, p: M.Exponential(p["rate"]), {"rate": [0.5, 3.0]}, [[0.1, 2.0], [1.5, 0.0]]),
    "Laplace": (lambda M, p: M.Laplace(p["loc"], p["scale"]), {"loc": [0.3, -1.0], "scale": [0.5, 2.0]},
                [[0.1, 2.0], [0.3, -4.0]]),
    "Cauchy": (lambda M, p: M.Cauchy(p["loc"], p["scale"]), {"loc": [0.3, -1.0], "scale": [0.5, 2.0]},
               [[0.1, 2.0], [0.3, -4.0]]),
    "HalfNormal": (lambda M, p: M.HalfNormal(p["scale"]), {"scale": [0.5, 2.0]}, [[0.1, 2.0], [1.3, 0.0]]),
    "HalfCauchy": (lambda M, p: M.HalfCauchy(p["scale"]), {"scale": [0.5, 2.0]}, [[0.1, 2.0], [1.3, 0.0]]),
    "LogNormal": (lambda M, p: M.LogNormal(p["loc"], p["scale"]), {"loc": [0.3, -1.0], "scale": [0.5, 0.8]},
                  [[0.1, 2.0], [1.3, 0.5]]),
    "Gumbel": (lambda M, p: M.Gumbel(p["loc"], p["scale"]), {"loc": [0.3, -1.0], "scale": [0.5, 2.0]},
               [[0.1, 2.0], [0.3, -4.0]]),
    "Bernoulli": (lambda M, p: M.Bernoulli(probs=p["probs"]), {"probs": [0.2, 0.7]}, [[0.0, 1.0], [1.0, 1.0]]),
    "Bernoulli(logits)": (lambda M, p: M.Bernoulli(logits=p["logits"]), {"logits": [-1.5, 0.4]},
                          [[0.0, 1.0], [1.0, 0.0]]),
    "Geometric": (lambda M, p: M.Geometric(probs=p["probs"]), {"probs": [0.3, 0.8]}, [[0.0, 3.0], [5.0, 1.0]]),
    "Poisson": (lambda M, p: M.Poisson(p["rate"]), {"rate": [0.7, 6.0]}, [[0.0, 3.0], [5.0, 9.0]]),
    "Binomial": (lambda M, p: M.Binomial(p["total_count"], probs=p["probs"]),
                 {"total_count": [5.0, 12.0], "probs": [0.3, 0.6]}, [[0.0, 3.0], [5.0, 12.0]]),
    "Categorical": (lambda M, p: M.Categorical(probs=p["probs"]),
                    {"probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]}, [[0, 2], [1, 1]]),
    "Categorical(logits)": (lambda M, p: M.Categorical(logits=p["logits"]),
                            {"logits": [[0.2, -1.3, 0.5], [2.0, 0.1, -0.3]]}, [[0, 2], [1, 1]]),
    "OneHotCategorical": (lambda M, p: M.OneHotCategorical(probs=p["probs"]),
                          {"probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]},
                          [[[1.0, 0, 0], [0, 0, 1.0]], [[0, 1.0, 0], [0, 1.0, 0]]]),
    "Multinomial": (lambda M, p: M.Multinomial(4, probs=p["probs"]), {"probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]},
                    [[[1.0, 1, 2], [4, 0, 0]], [[0, 3.0, 1], [2, 1.0, 1]]]),
    "Independent(Normal)": (lambda M, p: M.Independent(M.Normal(p["loc"], p["scale"]), 1),
                            {"loc": [[0.3, -1.0], [0.0, 1.0]], "scale": [[0.5, 2.0], [1.0, 1.5]]},
                            [[0.1, 2.0], [-0.4, -1.0]]),
    "Gamma": (lambda M, p: M.Gamma(p["concentration"], p["rate"]), {"concentration": [0.5, 3.0], "rate": [1.0, 2.5]},
              [[0.1, 2.0], [1.5, 0.3]]),
    "Chi2": (lambda M, p: M.Chi2(p["df"]), {"df": [1.5, 6.0]}, [[0.1, 2.0], [1.5, 7.0]]),
    "Beta": (lambda M, p: M.Beta(p["a"], p["b"]), {"a": [0.7, 2.0], "b": [1.5, 5.0]}, [[0.1, 0.5], [0.9, 0.2]]),
    "Dirichlet": (lambda M, p: M.Dirichlet(p["c"]), {"c": [[0.7, 2.0, 1.0], [3.0, 1.5, 0.8]]},
                  [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]]),
    "StudentT": (lambda M, p: M.StudentT(p["df"], p["loc"], p["scale"]),
                 {"df": [5.0, 9.0], "loc": [0.3, -1.0], "scale": [0.5, 2.0]}, [[0.1, 2.0], [-0.4, -1.0]]),
    "FisherSnedecor": (lambda M, p: M.FisherSnedecor(p["df1"], p["df2"]), {"df1": [5.0, 12.0], "df2": [19.0, 24.0]},
                       [[0.5, 2.0], [1.2, 0.3]]),
    "Kumaraswamy": (lambda M, p: M.Kumaraswamy(p["a"], p["b"]), {"a": [2.0, 1.5], "b": [3.0, 0.8]},
                    [[0.1, 0.5], [0.9, 0.2]]),
    "Weibull": (lambda M, p: M.Weibull(p["scale"], p["k"]), {"scale": [1.0, 2.5], "k": [1.5, 3.0]},
                [[0.1, 2.0], [1.5, 0.3]]),
    "Pareto": (lambda M, p: M.Pareto(p["scale"], p["alpha"]), {"scale": [1.0, 0.5], "alpha": [5.0, 6.0]},
               [[1.1, 2.0], [1.5, 0.6]]),
    "ContinuousBernoulli": (lambda M, p: M.ContinuousBernoulli(probs=p["probs"]), {"probs": [0.2, 0.7]},
                            [[0.1, 0.5], [0.9, 0.2]]),
    "ContinuousBernoulli(near 0.5)": (lambda M, p: M.ContinuousBernoulli(probs=p["probs"]), {"probs": [0.4995, 0.5003]},
                                      [[0.1, 0.5], [0.9, 0.2]]),
    "RelaxedBernoulli": (lambda M, p: M.RelaxedBernoulli(p["t"], probs=p["probs"]),
                         {"t": 0.7, "probs": [0.2, 0.7]}, [[0.1, 0.5], [0.9, 0.2]]),
    "RelaxedOneHotCategorical": (lambda M, p: M.RelaxedOneHotCategorical(p["t"], probs=p["probs"]),
                                 {"t": 0.7, "probs": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]},
                                 [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]]),
    "LogisticNormal": (lambda M, p: M.LogisticNormal(p["loc"], p["scale"]),
                       {"loc": [[0.3, -1.0], [0.0, 0.5]], "scale": [[0.5, 1.0], [1.0, 0.7]]},
                       [[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]]),
    "VonMises": (lambda M, p: M.VonMises(p["loc"], p["k"]), {"loc": [0.3, -1.0], "k": [0.5, 4.0]},
                 [[0.1, 2.0], [-0.4, -1.0]]),
    "NegativeBinomial": (lambda M, p: M.NegativeBinomial(p["n"], probs=p["probs"]), {"n": [3.0, 10.0], "probs": [0.3, 0.6]},
                         [[0.0, 3.0], [5.0, 12.0]]),
    "MultivariateNormal": (lambda M, p: M.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
                           {"loc": [[0.3, -1.0, 0.0], [1.0, 0.5, -0.5]],
                            "cov": [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]},
                           [[0.1, 2.0, 0.0], [[-0.4, -1.0, 0.3], [0.0, 0.0, 0.0]]]),
    "MultivariateNormal(scale_tril)": (lambda M, p: M.MultivariateNormal(p["loc"], scale_tril=p["L"]),
                                       {"loc": [0.3, -1.0], "L": [[1.2, 0.0], [0.4, 0.6]]}, [[0.1, 2.0]]),
    "MultivariateNormal(precision)": (lambda M, p: M.MultivariateNormal(p["loc"], precision_matrix=p["P"]),
                                      {"loc": [0.3, -1.0], "P": [[2.0, 0.3], [0.3, 1.0]]}, [[0.1, 2.0]]),
    "LowRankMultivariateNormal": (lambda M, p: M.LowRankMultivariateNormal(p["loc"], p["W"], p["d"]),
                                  {"loc": [0.3, -1.0, 0.5], "W": [[1.0], [0.5], [-0.3]], "d": [0.5, 1.0, 2.0]},
                                  [[0.1, 2.0, 0.0]]),
    "InverseGamma": (lambda M, p: M.InverseGamma(p["c"], p["rate"]), {"c": [3.5, 5.0], "rate": [1.0, 2.5]},
                     [[0.1, 2.0], [1.5, 0.3]]),
    "GeneralizedPareto": (lambda M, p: M.GeneralizedPareto(p["loc"], p["scale"], p["c"]),
                          {"loc": [0.0, 1.0, -1.0], "scale": [1.0, 2.0, 0.5], "c": [0.2, 0.0, -0.3]},
                          [[0.5, 2.0, -0.5], [3.0, 1.5, 0.0]]),
    "LKJCholesky": (lambda M, p: M.LKJCholesky(3, p["c"]), {"c": [0.5, 2.0]},
                    [[[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]] * 2]),
    "Wishart": (lambda M, p: M.Wishart(p["df"], covariance_matrix=p["cov"]),
                {"df": [4.0, 6.5], "cov": [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]},
                [[[[2.0, 0.5, 0.0], [0.5, 1.0, 0.1], [0.0, 0.1, 0.7]]] * 2]),
    "Wishart(scale_tril)": (lambda M, p: M.Wishart(p["df"], scale_tril=p["L"]),
                            {"df": 3.5, "L": [[1.2, 0.0], [0.4, 0.6]]}, [[[2.0, 0.5], [0.5, 1.0]]]),
    "MixtureSameFamily": (lambda M, p: M.MixtureSameFamily(M.Categorical(probs=p["w"]), M.Normal(p["loc"], p["scale"])),
                          {"w": [0.3, 0.7], "loc": [-1.0, 2.0], "scale": [0.5, 1.0]}, [[0.1], [2.0]]),
}

# draws whose variance is infinite: only the support and shapes are checked
HEAVY_TAILED = {"Cauchy", "HalfCauchy"}


def build(name, device):
    ctor, params, values = CASES[name]
    t_params = {k: torch.tensor(v) for k, v in params.items()}
    w_params = {k: ours(v, device) for k, v in t_params.items()}
    torch.manual_seed(0)
    return ctor(torch.distributions, t_params), ctor(D, w_params), values


def same_or_same_error(got_fn, expected_fn, **tol):
    try:
        expected = expected_fn()
    except AttributeError:  # PyTorch's expanded Multinomial lacks its _binomial: nothing to compare
        return
    except (NotImplementedError, ValueError) as e:
        with pytest.raises(type(e)):
            got_fn()
        return
    assert_close(got_fn(), expected, check_dtype=False, **tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scores_and_moments_match(name, device):
    theirs, mine, values = build(name, device)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(mine.event_shape) == tuple(theirs.event_shape)
    assert mine.has_rsample == theirs.has_rsample
    for v in values:
        tv = torch.tensor(v)
        tv = tv.float() if tv.dtype.is_floating_point else tv
        wv = ours(tv, device)
        assert_close(mine.log_prob(wv), theirs.log_prob(tv), rtol=1e-5, atol=1e-5, check_dtype=False)
        if not theirs.support.is_discrete and theirs.event_shape == ():
            same_or_same_error(lambda: mine.cdf(wv), lambda: theirs.cdf(tv), rtol=1e-4, atol=1e-5)
    for prop in ("mean", "mode", "variance", "stddev"):
        same_or_same_error(lambda: getattr(mine, prop), lambda: getattr(theirs, prop))
    same_or_same_error(mine.entropy, theirs.entropy, rtol=1e-5, atol=1e-5)
    same_or_same_error(mine.perplexity, theirs.perplexity, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfNormal",
                                  "HalfCauchy", "LogNormal"])
def test_icdf_inverts_cdf_as_pytorch(name, device):
    theirs, mine, _ = build(name, device)
    q = torch.tensor([[0.1, 0.5], [0.9, 0.25]])
    assert_close(mine.icdf(ours(q, device)), theirs.icdf(q), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_samples_have_the_moments_and_support(name, device):
    # (seeded: the draws, and so the statistics, do not depend on the tests run before; the
    # F case's df2 keeps its fourth moment small enough for a 10% variance check at 20k draws)
    torchweb.manual_seed(1234)
    theirs, mine, _ = build(name, device)
    x = mine.sample((N_DRAWS,))
    assert tuple(x.shape) == (N_DRAWS,) + tuple(theirs.batch_shape) + tuple(theirs.event_shape)
    assert not x.requires_grad
    t = torch.tensor(x.tolist())
    assert bool(theirs.support.check(t).all()), f"{name}: a draw outside the support"
    if name in HEAVY_TAILED:
        return
    try:
        mean, var = theirs.mean, theirs.variance
    except NotImplementedError:  # the relaxed families, LogisticNormal: no closed-form moments
        return
    if name.startswith("Categorical"):  # the frequency of each class
        t = torch.nn.functional.one_hot(t, theirs.probs.shape[-1])
        mean, var = theirs.probs, theirs.probs * (1 - theirs.probs)
    if name == "VonMises":  # circular: E[cos(x - loc)] = 1 - circular variance, E[sin(x - loc)] = 0
        t = torch.stack([torch.cos(t - theirs.loc), torch.sin(t - theirs.loc)], -1)
        mean = torch.stack([1 - var, torch.zeros_like(var)], -1)
        var = t.double().var(0).float()
    err = (t.double().mean(0) - mean.double()).abs()
    assert bool((err <= 5 * (var.double() / N_DRAWS).sqrt() + 1e-6).all()), f"{name}: sample mean {t.double().mean(0)} vs {mean}"
    sample_var = t.double().var(0)
    assert bool(((sample_var - var.double()).abs() <= 0.1 * var.double() + 1e-6).all()), \
        f"{name}: sample variance {sample_var} vs {var}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_expand_matches(name, device):
    theirs, mine, _ = build(name, device)
    shape = (3,) + tuple(theirs.batch_shape)
    te, we = theirs.expand(shape), mine.expand(shape)
    assert type(we).__name__ == type(te).__name__
    assert tuple(we.batch_shape) == tuple(te.batch_shape) and tuple(we.event_shape) == tuple(te.event_shape)
    x = we.sample()
    assert tuple(x.shape) == tuple(te.sample().shape)
    same_or_same_error(we.entropy, te.entropy, rtol=1e-5, atol=1e-5)


def test_rsample_is_differentiable_as_pytorch(device):
    loc = ours(torch.tensor([0.3, -1.0]), device, requires_grad=True)
    scale = ours(torch.tensor([0.5, 2.0]), device, requires_grad=True)
    x = D.Normal(loc, scale).rsample((5,))
    x.sum().backward()
    eps = (x.detach() - loc.detach()) / scale.detach()
    assert_close(loc.grad, torch.full((2,), 5.0))
    assert_close(scale.grad, torch.tensor(eps.sum(0).tolist()), rtol=1e-4, atol=1e-5)
    # LogNormal: d exp(loc + scale * eps) / d loc = the draw itself
    loc.grad = None
    y = D.LogNormal(loc, scale).rsample((4,))
    y.sum().backward()
    assert_close(loc.grad, torch.tensor(y.detach().sum(0).tolist()), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Gumbel", "Bernoulli(logits)", "Categorical(logits)",
                                  "Poisson", "Binomial"])
def test_log_prob_and_entropy_gradients_match(name, device):
    ctor, params, values = CASES[name]
    t_params = {k: torch.tensor(v, requires_grad=True) for k, v in params.items() if k != "total_count"}
    w_params = {k: ours(torch.tensor(v), device, requires_grad=True) for k, v in params.items() if k != "total_count"}
    if "total_count" in params:
        t_params["total_count"] = torch.tensor(params["total_count"])
        w_params["total_count"] = ours(t_params["total_count"], device)
    tv = torch.tensor(values[0])
    tv = tv.float() if tv.dtype.is_floating_point else tv
    theirs, mine = ctor(torch.distributions, t_params), ctor(D, w_params)
    try:
        theirs_entropy = theirs.entropy().sum()
    except NotImplementedError:  # Poisson's; Binomial's with unequal counts
        with pytest.raises(NotImplementedError):
            mine.entropy()
        theirs_entropy = None
    (theirs.log_prob(tv).sum() + (0 if theirs_entropy is None else theirs_entropy)).backward()
    (mine.log_prob(ours(tv, device)).sum() + (0 if theirs_entropy is None else mine.entropy().sum())).backward()
    for k in t_params:
        if t_params[k].requires_grad:
            assert_close(w_params[k].grad, t_params[k].grad, rtol=1e-4, atol=1e-5)


def test_straight_through_passes_probs_gradient(device):
    probs = ours(torch.tensor([[0.2, 0.3, 0.5]]), device, requires_grad=True)
    s = D.OneHotCategoricalStraightThrough(probs=probs).rsample()
    assert bool(((s.detach() == 0) | (s.detach() == 1)).all()) and float(s.detach().sum()) == 1.0
    (s * ours(torch.tensor([[1.0, 2.0, 3.0]]), device)).sum().backward()
    # probs are normalized by Categorical: d/dp of p/sum(p) · w
    p = torch.tensor([[0.2, 0.3, 0.5]], requires_grad=True)
    ((p / p.sum(-1, keepdim=True)) * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert_close(probs.grad, p.grad, rtol=1e-4, atol=1e-5)


def test_categorical_sample_shapes_and_enumerate_support(device):
    probs = torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    c = D.Categorical(probs=ours(probs, device))
    assert tuple(c.sample().shape) == (2,) and tuple(c.sample((4, 3)).shape) == (4, 3, 2)
    assert c.sample().dtype == torchweb.int64
    assert_close(c.enumerate_support(), torch.distributions.Categorical(probs).enumerate_support())
    assert_close(c.enumerate_support(False), torch.distributions.Categorical(probs).enumerate_support(False))


# ---- validation ---------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _pytorch_validates():
    """PyTorch's torch.compile turns argument validation off for every distribution, for good
    (torch/_dynamo/eval_frame.py): the oracle validates again here, whatever ran before."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def _same_error(mine_fn, theirs_fn, prefix_len=40):
    with pytest.raises(Exception) as expected:
        theirs_fn()
    with pytest.raises(type(expected.value)) as got:
        mine_fn()
    assert str(got.value)[:prefix_len] == str(expected.value)[:prefix_len]


def test_parameter_and_sample_validation_errors(device):
    bad_scale = torch.tensor([1.0, -1.0])
    _same_error(lambda: D.Normal(ours(torch.zeros(2), device), ours(bad_scale, device)),
                lambda: torch.distributions.Normal(torch.zeros(2), bad_scale), prefix_len=60)
    probs = torch.tensor([0.5, 0.5])
    _same_error(lambda: D.Categorical(probs=ours(probs, device), logits=ours(probs, device)),
                lambda: torch.distributions.Categorical(probs=probs, logits=probs))
    _same_error(lambda: D.Categorical(ours(torch.tensor(0.5), device)),
                lambda: torch.distributions.Categorical(torch.tensor(0.5)))
    _same_error(lambda: D.Exponential(ours(torch.ones(2), device)).log_prob(ours(torch.tensor([-1.0, 1.0]), device)),
                lambda: torch.distributions.Exponential(torch.ones(2)).log_prob(torch.tensor([-1.0, 1.0])),
                prefix_len=60)
    _same_error(lambda: D.Normal(0.0, 1.0).log_prob([0.5]), lambda: torch.distributions.Normal(0.0, 1.0).log_prob([0.5]))
    _same_error(lambda: D.Independent(D.Normal(0.0, 1.0), 1),
                lambda: torch.distributions.Independent(torch.distributions.Normal(0.0, 1.0), 1))
    _same_error(lambda: D.Uniform(ours(torch.ones(2), device), ours(torch.zeros(2), device)),
                lambda: torch.distributions.Uniform(torch.ones(2), torch.zeros(2)), prefix_len=60)
    _same_error(lambda: D.Distribution.set_default_validate_args(3),
                lambda: torch.distributions.Distribution.set_default_validate_args(3))


def test_validate_args_off_skips_the_checks(device):
    d = D.Normal(ours(torch.zeros(2), device), ours(torch.tensor([1.0, -1.0]), device), validate_args=False)
    assert tuple(d.batch_shape) == (2,)
    try:
        D.Distribution.set_default_validate_args(False)
        assert tuple(D.Exponential(ours(torch.tensor([-1.0]), device)).batch_shape) == (1,)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter rate"):
        D.Exponential(ours(torch.tensor([-1.0]), device))


@pytest.mark.parametrize("rate", [3.0, 10.0, 250.0, 1e5])
def test_poisson_draws_for_small_and_large_rates(rate, device):
    """The table (rates below 10) and PTRS (10 and above): mean within 5 standard errors, variance
    within 5%, integers."""
    x = torch.tensor(D.Poisson(ours(torch.full((N_DRAWS,), rate), device)).sample().tolist(), dtype=torch.float64)
    assert bool((x == x.round()).all()) and bool((x >= 0).all())
    assert abs(x.mean() - rate) < 5 * (rate / N_DRAWS) ** 0.5
    assert abs(x.var() - rate) < 0.05 * rate


@pytest.mark.parametrize("n,p", [(5.0, 0.3), (40.0, 0.8), (1000.0, 0.3), (1e6, 2e-6)])
def test_binomial_draws_for_small_and_large_counts(n, p, device):
    """The table (n p < 10, the smaller of p and 1 - p) and BTRS: mean within 5 standard errors,
    variance within 5%, integers in [0, n]."""
    d = D.Binomial(ours(torch.full((N_DRAWS,), n), device), probs=ours(torch.full((N_DRAWS,), p), device))
    x = torch.tensor(d.sample().tolist(), dtype=torch.float64)
    mean, var = n * p, n * p * (1 - p)
    assert bool((x == x.round()).all()) and bool(((x >= 0) & (x <= n)).all())
    assert abs(x.mean() - mean) < 5 * (var / N_DRAWS) ** 0.5
    assert abs(x.var() - var) < 0.05 * var


def test_unknown_names_keep_pythons_message():
    assert not hasattr(D, "NoSuchDistribution")
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchDistribution'"):
        D.NoSuchDistribution


def test_module_paths_and_torch_alias():
    import importlib
    assert importlib.import_module("torchweb.distributions") is D
    assert D.kl.kl_divergence is D.kl_divergence
    assert D.constraints.positive.check(torchweb.tensor([1.0, -1.0])).tolist() == [True, False]
    assert repr(D.constraints.interval(0.0, 1.0)) == repr(torch.distributions.constraints.interval(0.0, 1.0))
    assert repr(D.constraints.positive) == repr(torch.distributions.constraints.positive)


def test_gamma_rsample_gradient_is_pytorchs_implicit_one(device):
    """dx/dalpha at our draws against PyTorch's _standard_gamma_grad at the same draws."""
    alpha_values = [0.3, 1.0, 2.5, 10.0, 60.0, 200.0]
    alpha = ours(torch.tensor(alpha_values).repeat(200), device, requires_grad=True)
    x = D.Gamma(alpha, 1.0).rsample()
    x.sum().backward()
    t_alpha, t_x = torch.tensor(alpha.tolist()), torch.tensor(x.tolist())
    expected = torch._standard_gamma_grad(t_alpha, t_x)
    got = torch.tensor(alpha.grad.tolist())
    rel = ((got - expected).abs() / expected.abs()).quantile(0.95)
    assert rel < 2e-3, f"95th percentile relative error {rel}"


@pytest.mark.parametrize("name,make,grad_of_mean", [
    ("Gamma", lambda M, a: M.Gamma(a, 2.0), lambda a: torch.full_like(a, 0.5)),
    ("Beta", lambda M, a: M.Beta(a, 2.0), lambda a: 2.0 / (a + 2.0) ** 2),
    ("StudentT", lambda M, a: M.StudentT(6.0, a, 1.0), lambda a: torch.ones_like(a)),
])
def test_rsample_gradient_has_the_mean_gradient(name, make, grad_of_mean, device):
    """E[dx/dtheta] = dE[x]/dtheta: the mean of 20k per-draw gradients, within 5 standard errors."""
    a = torch.tensor([0.7, 3.0])
    w = ours(a, device, requires_grad=True)
    x = make(D, w).rsample((N_DRAWS,))
    per_draw = []
    for i in range(2):
        g = torchweb.autograd.grad(x[:, i].sum(), w, retain_graph=True)[0]
        per_draw.append(float(g[i]) / N_DRAWS)
    expected = grad_of_mean(a)
    # the spread of per-draw gradients bounds the standard error (Gamma(a, 2): dx/da ~ x / (2a))
    for i in range(2):
        assert abs(per_draw[i] - float(expected[i])) < 0.03 * max(1.0, abs(float(expected[i]))), (name, per_draw, expected)


def test_dirichlet_rsample_gradient_matches_pytorchs_mean_gradient(device):
    c = torch.tensor([0.8, 2.0, 1.5])
    w = ours(c, device, requires_grad=True)
    x = D.Dirichlet(w).rsample((N_DRAWS,))
    x[:, 0].mean().backward()
    tc = c.clone().requires_grad_()
    (tc[0] / tc.sum()).backward()
    assert_close(w.grad, tc.grad, rtol=0.05, atol=0.01)


def test_lkj_correlations_match_pytorchs_draws(device):
    """The correlations of L L^T: unit diagonal, mean 0, and the spread of PyTorch's own draws
    (for [1, 0] the LKJ marginal's variance 1 / (2 eta + d - 1); PyTorch's onion sampler, which
    ours follows, gives later rows more spread)."""
    eta = torch.tensor([0.5, 2.0])
    n = N_DRAWS // 4
    mine = D.LKJCholesky(3, ours(eta, device)).sample((n,))
    corr = torch.tensor((mine @ mine.mT).tolist())
    torch.manual_seed(0)
    L = torch.distributions.LKJCholesky(3, eta).sample((N_DRAWS,))
    theirs = L @ L.mT
    assert torch.allclose(corr.diagonal(dim1=-2, dim2=-1), torch.ones(1), atol=1e-4)
    for i, j in ((1, 0), (2, 0), (2, 1)):
        values, expected_var = corr[..., i, j], theirs[..., i, j].var(0)
        assert bool((values.mean(0).abs() < 5 * (expected_var / n).sqrt()).all()), values.mean(0)
        assert bool(((values.var(0) - expected_var).abs() < 0.1 * expected_var).all()), (values.var(0), expected_var)
    assert torch.allclose(theirs[..., 1, 0].var(0), 1 / (2 * eta + 2), rtol=0.05)


def test_multivariate_and_mixture_argument_errors_match_pytorch(device):
    TD = torch.distributions
    loc, eye = torch.zeros(2), torch.eye(2)

    def w(t):
        return ours(t, device)

    _same_error(lambda: D.MultivariateNormal(w(torch.tensor(0.0)), w(eye)), lambda: TD.MultivariateNormal(torch.tensor(0.0), eye))
    _same_error(lambda: D.MultivariateNormal(w(loc), w(eye), scale_tril=w(eye)),
                lambda: TD.MultivariateNormal(loc, eye, scale_tril=eye))
    _same_error(lambda: D.MultivariateNormal(w(loc), w(torch.ones(2))), lambda: TD.MultivariateNormal(loc, torch.ones(2)))
    not_pd = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
    _same_error(lambda: D.MultivariateNormal(w(loc), w(not_pd)), lambda: TD.MultivariateNormal(loc, not_pd), prefix_len=60)
    _same_error(lambda: D.LowRankMultivariateNormal(w(loc), w(torch.ones(3, 1)), w(torch.ones(2))),
                lambda: TD.LowRankMultivariateNormal(loc, torch.ones(3, 1), torch.ones(2)))
    _same_error(lambda: D.MixtureSameFamily(D.Categorical(w(torch.ones(3))), D.Normal(w(torch.zeros(2)), 1.0)),
                lambda: TD.MixtureSameFamily(TD.Categorical(torch.ones(3)), TD.Normal(torch.zeros(2), 1.0)))
    _same_error(lambda: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)),
                lambda: TD.MixtureSameFamily(TD.Normal(0.0, 1.0), TD.Normal(0.0, 1.0)))
    _same_error(lambda: D.LKJCholesky(1), lambda: TD.LKJCholesky(1))
    _same_error(lambda: D.Wishart(w(torch.tensor(0.5)), w(eye)), lambda: TD.Wishart(torch.tensor(0.5), eye))
    _same_error(lambda: D.Dirichlet(w(torch.tensor(1.0))), lambda: TD.Dirichlet(torch.tensor(1.0)))
    _same_error(lambda: D.Multinomial(w(torch.tensor(2.0)), w(torch.ones(2))), lambda: TD.Multinomial(torch.tensor(2.0), torch.ones(2)))
    _same_error(lambda: D.ContinuousBernoulli(w(torch.tensor([1.5])), validate_args=True),
                lambda: TD.ContinuousBernoulli(torch.tensor([1.5]), validate_args=True))


def test_mixture_cdf_and_lowrank_matrices_match_pytorch(device):
    TD = torch.distributions
    w, loc, scale = torch.tensor([0.3, 0.7]), torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])
    mine = D.MixtureSameFamily(D.Categorical(ours(w, device)), D.Normal(ours(loc, device), ours(scale, device)))
    theirs = TD.MixtureSameFamily(TD.Categorical(w), TD.Normal(loc, scale))
    v = torch.tensor([0.1, 2.5, -1.0])
    assert_close(mine.cdf(ours(v, device)), theirs.cdf(v), rtol=1e-5, atol=1e-6)
    mine_lr = D.LowRankMultivariateNormal(ours(torch.zeros(3), device), ours(torch.tensor([[1.0], [0.5], [-0.3]]), device),
                                          ours(torch.tensor([0.5, 1.0, 2.0]), device))
    theirs_lr = TD.LowRankMultivariateNormal(torch.zeros(3), torch.tensor([[1.0], [0.5], [-0.3]]), torch.tensor([0.5, 1.0, 2.0]))
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        assert_close(getattr(mine_lr, name), getattr(theirs_lr, name), rtol=1e-4, atol=1e-5)
    mine_mvn = D.MultivariateNormal(ours(torch.zeros(2), device), precision_matrix=ours(torch.tensor([[2.0, 0.3], [0.3, 1.0]]), device))
    theirs_mvn = TD.MultivariateNormal(torch.zeros(2), precision_matrix=torch.tensor([[2.0, 0.3], [0.3, 1.0]]))
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        assert_close(getattr(mine_mvn, name), getattr(theirs_mvn, name), rtol=1e-4, atol=1e-5)


def test_loaded_on_first_use_and_through_the_torch_alias():
    code = textwrap.dedent("""
        import sys
        import torchweb
        print("torchweb.distributions" in sys.modules)
        torchweb.install_torch_alias()
        import torch
        import torch.distributions as D
        from torch.distributions import Categorical, kl_divergence
        print(D is torchweb.distributions, Categorical is torchweb.distributions.Categorical,
              kl_divergence is torchweb.distributions.kl.kl_divergence, torch.distributions is D)
    """)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=120,
                       env=dict(os.environ, PYTHONPATH=os.path.abspath(src)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "True", "True", "True"]


@pytest.mark.parametrize("name", ["Bernoulli", "Binomial", "Categorical", "OneHotCategorical"])
def test_enumerate_support_matches_pytorch(name, device):
    theirs, mine, _ = build(name, device)
    assert mine.has_enumerate_support == theirs.has_enumerate_support
    for expand in (True, False):
        same_or_same_error(lambda: mine.enumerate_support(expand), lambda: theirs.enumerate_support(expand))
    if name == "Binomial":  # unequal counts above: PyTorch's NotImplementedError; equal counts here
        theirs, mine = torch.distributions.Binomial(4, torch.tensor([0.3, 0.6])), D.Binomial(4, ours(torch.tensor([0.3, 0.6]), device))
        assert_close(mine.enumerate_support(), theirs.enumerate_support())
        assert_close(mine.entropy(), theirs.entropy(), rtol=1e-5, atol=1e-6)


def test_sample_n_warns_and_dependent_constraints_behave_as_pytorchs(device):
    d = D.Normal(ours(torch.zeros(2), device), 1.0)
    with pytest.warns(FutureWarning, match="sample_n"):
        assert tuple(d.sample_n(3).shape) == (3, 2)
    assert D.constraints.is_dependent(D.Uniform.support) and not D.constraints.is_dependent(D.constraints.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        D.constraints.dependent.check(torchweb.zeros(1))
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        D.constraints.dependent.event_dim
    assert D.constraints.dependent(is_discrete=True, event_dim=1).event_dim == 1
    assert D.Categorical.support.is_discrete and D.Categorical.support.event_dim == 0
    u = D.Uniform(ours(torch.zeros(2), device), ours(torch.tensor([1.0, 2.0]), device))
    assert u.support.check(ours(torch.tensor([0.5, 2.5]), device)).tolist() == [True, False]


def test_a_subclass_with_its_own_init_must_define_expand():
    class Shifted(D.Normal):
        def __init__(self, shift):
            super().__init__(shift, 1.0)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Shifted(torchweb.zeros(2)).expand((3, 2))
