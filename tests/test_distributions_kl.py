"""kl_divergence against PyTorch's for the registered pairs, and register_kl's dispatch."""

import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, ours

D = torchweb.distributions

P2 = {"loc": [0.3, -1.0], "scale": [0.5, 2.0]}
Q2 = {"loc": [-0.2, 0.5], "scale": [1.5, 0.7]}
MAKERS = {
    "Normal": (lambda M, p: M.Normal(p["loc"], p["scale"]), P2, Q2),
    "Laplace": (lambda M, p: M.Laplace(p["loc"], p["scale"]), P2, Q2),
    "Cauchy": (lambda M, p: M.Cauchy(p["loc"], p["scale"]), P2, Q2),
    "Gumbel": (lambda M, p: M.Gumbel(p["loc"], p["scale"]), P2, Q2),
    "HalfNormal": (lambda M, p: M.HalfNormal(p["scale"]), P2, Q2),
    "LogNormal": (lambda M, p: M.LogNormal(p["loc"], p["scale"]), P2, Q2),
    "Exponential": (lambda M, p: M.Exponential(p["scale"]), P2, Q2),
    "Uniform": (lambda M, p: M.Uniform(p["loc"], p["loc"] + p["scale"]), {"loc": [0.0, -1.0], "scale": [1.0, 1.0]},
                {"loc": [-0.5, -2.0], "scale": [2.0, 4.0]}),
    "Bernoulli": (lambda M, p: M.Bernoulli(probs=p["scale"] / 3), P2, Q2),
    "Geometric": (lambda M, p: M.Geometric(probs=p["scale"] / 3), P2, Q2),
    "Poisson": (lambda M, p: M.Poisson(p["scale"]), P2, Q2),
    "Binomial": (lambda M, p: M.Binomial(6, probs=p["scale"] / 3), P2, Q2),
    "Categorical": (lambda M, p: M.Categorical(logits=p["logits"]), {"logits": [[0.2, -1.0, 0.5], [1.0, 0.0, -2.0]]},
                    {"logits": [[1.2, 0.3, -0.5], [0.0, 0.0, 0.0]]}),
    "OneHotCategorical": (lambda M, p: M.OneHotCategorical(logits=p["logits"]),
                          {"logits": [[0.2, -1.0, 0.5]]}, {"logits": [[1.2, 0.3, -0.5]]}),
    "Independent": (lambda M, p: M.Independent(M.Normal(p["loc"], p["scale"]), 1), P2, Q2),
    "Gamma": (lambda M, p: M.Gamma(p["scale"] * 2, p["scale"]), P2, Q2),
    "Beta": (lambda M, p: M.Beta(p["scale"], p["scale"] + 1), P2, Q2),
    "Dirichlet": (lambda M, p: M.Dirichlet(p["c"]), {"c": [[0.7, 2.0, 1.0]]}, {"c": [[1.5, 0.5, 3.0]]}),
    "ContinuousBernoulli": (lambda M, p: M.ContinuousBernoulli(probs=p["scale"] / 3), P2, Q2),
    "Pareto": (lambda M, p: M.Pareto(p["scale"], p["scale"] + 2), P2, Q2),
    "MultivariateNormal": (lambda M, p: M.MultivariateNormal(p["loc"], scale_tril=p["L"]),
                           {"loc": [0.3, -1.0], "L": [[1.2, 0.0], [0.4, 0.6]]},
                           {"loc": [0.0, 0.5], "L": [[0.8, 0.0], [-0.3, 1.1]]}),
    "Wishart (Bregman)": (lambda M, p: M.Wishart(p["df"], covariance_matrix=p["cov"]),
                          {"df": 4.0, "cov": [[2.0, 0.3], [0.3, 1.0]]}, {"df": 5.0, "cov": [[1.0, -0.2], [-0.2, 0.5]]}),
    "LowRankMultivariateNormal": (lambda M, p: M.LowRankMultivariateNormal(p["loc"], p["W"], p["d"]),
                                  {"loc": [0.3, -1.0], "W": [[1.0], [0.5]], "d": [0.5, 1.0]},
                                  {"loc": [0.0, 0.5], "W": [[0.2], [-0.5]], "d": [1.5, 0.7]}),
}

PAIRS = [(k, k) for k in MAKERS] + [
    ("Uniform", "Normal"), ("Uniform", "Gumbel"), ("Uniform", "Exponential"), ("Normal", "Laplace"),
    ("Normal", "Gumbel"), ("Laplace", "Normal"), ("Gumbel", "Normal"), ("Exponential", "Normal"),
    ("Exponential", "Gumbel"), ("Normal", "Uniform"), ("Bernoulli", "Poisson"), ("Poisson", "Bernoulli"),
    ("Beta", "Normal"), ("Beta", "Gamma"), ("Beta", "Exponential"), ("Beta", "Uniform"), ("Beta", "ContinuousBernoulli"),
    ("Gamma", "Normal"), ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Exponential", "Gamma"),
    ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Uniform"),
    ("Pareto", "Normal"), ("Pareto", "Gamma"), ("Pareto", "Exponential"), ("Uniform", "Beta"), ("Uniform", "Gamma"),
    ("Uniform", "Pareto"), ("Uniform", "ContinuousBernoulli"), ("Normal", "Gamma"), ("Gamma", "Uniform"),
    ("Laplace", "Gamma"), ("Gumbel", "Pareto"), ("Exponential", "Beta"), ("Pareto", "Uniform"), ("Beta", "Pareto"),
    ("Poisson", "Binomial"), ("ContinuousBernoulli", "Pareto"),
    ("MultivariateNormal", "LowRankMultivariateNormal"), ("LowRankMultivariateNormal", "MultivariateNormal"),
]


def _build(name, which, device):
    make, p, q = MAKERS[name]
    params = p if which == "p" else q
    t = {k: torch.tensor(v) for k, v in params.items()}
    return make(torch.distributions, t), make(D, {k: ours(v, device) for k, v in t.items()})


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_kl_matches_pytorch(p_name, q_name, device):
    tp, wp = _build(p_name, "p", device)
    tq, wq = _build(q_name, "q", device)
    assert_close(D.kl_divergence(wp, wq), torch.distributions.kl_divergence(tp, tq), rtol=1e-4, atol=1e-5)


def test_kl_gradient_matches_pytorch(device):
    loc = torch.tensor([0.3, -1.0], requires_grad=True)
    w_loc = ours(loc, device, requires_grad=True)
    torch.distributions.kl_divergence(torch.distributions.Normal(loc, 1.0), torch.distributions.Normal(0.0, 2.0)).sum().backward()
    q = D.Normal(ours(torch.tensor(0.0), device), ours(torch.tensor(2.0), device))
    D.kl_divergence(D.Normal(w_loc, 1.0), q).sum().backward()
    assert_close(w_loc.grad, loc.grad)


def test_unregistered_pair_raises_as_pytorch():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Poisson and q type Cauchy"):
        D.kl_divergence(D.Poisson(torchweb.tensor(1.0)), D.Cauchy(0.0, 1.0))
    with pytest.raises(TypeError, match="Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_register_kl_takes_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    class MyOtherNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return torchweb.tensor(-1.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == -1.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0)).item() == pytest.approx(0.5)

    @D.register_kl(D.Normal, MyOtherNormal)
    def _kl_other(p, q):
        return torchweb.tensor(-2.0)

    class Both(MyNormal, MyOtherNormal):
        pass

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        D.kl_divergence(Both(0.0, 1.0), Both(0.0, 1.0))
    assert any("Ambiguous kl_divergence" in str(w.message) for w in caught)
