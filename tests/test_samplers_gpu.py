"""The one-dispatch rejection samplers (backends' random_sample, ops/samplers.py): standard gamma
(Gamma, Beta, Dirichlet, ...), torch.poisson and torch.binomial against PyTorch's own samplers by
statistics, on both devices; seeded draws repeat and advance the generator by one call; the cpu
(numpy) and webgpu kernels draw the same numbers; sampling reads nothing back.

The draws are compared by their mean (within 5 standard errors of the true mean), their
variance (within 5 standard errors of the sample variance, sqrt((kurtosis excess + 2) / N)
relative), and a two-sample Kolmogorov-Smirnov test against N of PyTorch's draws at a fixed
seed: KS_CRIT is the statistic's 0.1% critical value, c(0.001) sqrt(2 / N) with c = 1.95 (for a
discrete law the test is conservative, so the same bound holds). Seeds are fixed: a pass stays a
pass."""

import math

import pytest
import torch

import torchweb
from oracle import ours

D = torchweb.distributions
N = 20000
KS_CRIT = math.sqrt(-math.log(0.001 / 2) / 2) * math.sqrt(2 / N)

ALPHAS = [0.01, 0.5, 1.0, 3.0, 100.0]
RATES = [0.0, 0.5, 5.0, 50.0, 1e4]
# (count, prob): count 0, inversion (n p < 10, also mirrored past 1/2), BTRS, n up to 1e6 with p
# near 0, 1/2 and 1
BINOMIALS = [(0.0, 0.5), (20.0, 0.3), (50.0, 0.9), (100.0, 0.5), (1e3, 0.99), (1e6, 1e-6), (1e6, 1e-4),
             (1e6, 0.5), (1e6, 1 - 1e-6)]


def ks_statistic(a, b):
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap of the empirical CDFs."""
    a, b = a.double().sort().values, b.double().sort().values
    at = torch.cat([a, b])
    cdf_a, cdf_b = torch.searchsorted(a, at, right=True) / len(a), torch.searchsorted(b, at, right=True) / len(b)
    return (cdf_a - cdf_b).abs().max().item()


def check_draws(name, mine, theirs, mean, var, kurtosis_excess):
    """mine, theirs: [N] draws (torch); the law's mean, variance and kurtosis excess."""
    x = mine.double()
    assert abs(x.mean().item() - mean) <= 5 * math.sqrt(var / N) + 1e-12, f"{name}: mean {x.mean()} vs {mean}"
    assert abs(x.var().item() - var) <= 5 * var * math.sqrt((kurtosis_excess + 2) / N) + 1e-12, \
        f"{name}: variance {x.var()} vs {var}"
    d = ks_statistic(mine, theirs)
    assert d < KS_CRIT, f"{name}: KS statistic {d:.4f} against PyTorch's draws (0.1% critical value {KS_CRIT:.4f})"


def _columns(values):
    return torch.tensor(values).repeat(N, 1)


def _drawn(t):
    return torch.tensor(t.tolist())


def test_gamma_draws_match_pytorchs(device):
    alpha = _columns(ALPHAS)
    torch.manual_seed(0)
    theirs = torch._standard_gamma(alpha)
    torchweb.manual_seed(0)
    mine = _drawn(D.Gamma(ours(alpha, device), 1.0).sample())
    assert bool((mine > 0).all())
    for j, a in enumerate(ALPHAS):
        check_draws(f"Gamma({a})", mine[:, j], theirs[:, j], a, a, 6 / a)


def test_poisson_draws_match_pytorchs(device):
    rate = _columns(RATES)
    torch.manual_seed(0)
    theirs = torch.poisson(rate)
    torchweb.manual_seed(0)
    mine = _drawn(torchweb.poisson(ours(rate, device)))
    assert bool((mine == mine.round()).all() and (mine >= 0).all())
    assert bool((mine[:, 0] == 0).all())   # rate 0
    for j, r in enumerate(RATES[1:], 1):
        check_draws(f"Poisson({r})", mine[:, j], theirs[:, j], r, r, 1 / r)
    via_distribution = _drawn(D.Poisson(ours(torch.tensor(RATES), device)).sample((N,)))
    check_draws("Poisson(5).sample()", via_distribution[:, 2], theirs[:, 2], 5.0, 5.0, 0.2)


def test_binomial_draws_match_pytorchs(device):
    count, prob = _columns([c for c, _ in BINOMIALS]), _columns([p for _, p in BINOMIALS])
    torch.manual_seed(0)
    theirs = torch.binomial(count, prob)
    torchweb.manual_seed(0)
    mine = _drawn(torchweb.binomial(ours(count, device), ours(prob, device)))
    assert bool((mine == mine.round()).all() and (mine >= 0).all() and (mine <= count).all())
    assert bool((mine[:, 0] == 0).all())   # count 0
    for j, (n, p) in enumerate(BINOMIALS[1:], 1):
        p = float(torch.tensor(p))   # (the float32 probability both sides draw with)
        q = 1 - p
        check_draws(f"Binomial({n}, {p})", mine[:, j], theirs[:, j], n * p, n * p * q, (1 - 6 * p * q) / (n * p * q))
    via_distribution = _drawn(D.Binomial(ours(torch.tensor(1e6), device), ours(torch.tensor(0.5), device)).sample((N,)))
    check_draws("Binomial(1e6, 0.5).sample()", via_distribution, theirs[:, 7], 5e5, 2.5e5, -2 / 2.5e5)


@pytest.mark.parametrize("name,make", [
    ("Beta(0.5, 0.5)", lambda M, t: M.Beta(t(0.5), t(0.5))),
    ("Beta(100, 3)", lambda M, t: M.Beta(t(100.0), t(3.0))),
    ("Dirichlet([0.2, 1, 30])[0]", lambda M, t: M.Dirichlet(t([0.2, 1.0, 30.0]))),
    ("StudentT(3)", lambda M, t: M.StudentT(t(3.0))),
    ("NegativeBinomial(5, 0.3)", lambda M, t: M.NegativeBinomial(t(5.0), t(0.3))),
])
def test_distributions_drawing_from_gamma_match_pytorchs(name, make, device):
    """The families whose draws are made from gamma (and Poisson) draws: KS against PyTorch's."""
    torch.manual_seed(0)
    theirs = make(torch.distributions, torch.tensor).sample((N,))
    torchweb.manual_seed(0)
    mine = _drawn(make(D, lambda v: ours(torch.tensor(v), device)).sample((N,)))
    if mine.dim() == 2:
        mine, theirs = mine[:, 0], theirs[:, 0]
    d = ks_statistic(mine, theirs)
    assert d < KS_CRIT, f"{name}: KS statistic {d:.4f} (0.1% critical value {KS_CRIT:.4f})"


SAMPLERS = {
    "gamma": lambda t, g=None: torchweb.ops.samplers.standard_gamma(t, g),
    "poisson": lambda t, g=None: torchweb.poisson(t * 20, generator=g),
    "binomial": lambda t, g=None: torchweb.binomial(t * 1000, t / 8, generator=g),
}


@pytest.mark.parametrize("kind", sorted(SAMPLERS))
def test_seeded_draws_repeat_and_take_one_generator_call(kind, device):
    """A seed gives the same draws; each call takes exactly one call of the generator's counter
    (whatever the number of tries: they count in the Philox counter's third word), so the next
    call's draws are new ones."""
    draw = SAMPLERS[kind]
    params = ours(torch.linspace(0.05, 4.0, 1000), device)
    torchweb.manual_seed(7)
    first = draw(params).tolist()
    second = draw(params).tolist()
    torchweb.manual_seed(7)
    assert draw(params).tolist() == first
    assert draw(params).tolist() == second
    same = sum(a == b for a, b in zip(first, second)) / len(first)
    assert same < (0.5 if kind != "gamma" else 0.01), f"the second call repeats {same:.0%} of the first's draws"
    gen = torchweb.Generator(params.device).manual_seed(3)
    before = gen.get_state()[1]
    a = draw(params, gen).tolist()
    assert gen.get_state()[1] == before + 1
    assert draw(params, torchweb.Generator(params.device).manual_seed(3)).tolist() == a


def test_both_devices_draw_the_same_numbers():
    """The numpy sampler runs the kernel's steps on the same Philox blocks: the counts are equal;
    gamma draws agree to float32 rounding but where alpha < 1's boost u^(1/alpha) amplifies it
    near float32's smallest normal (alpha 0.01). (Each element has its own stream: a difference
    stays in its element.)"""
    alpha, rate = _columns(ALPHAS)[:4000], _columns(RATES)[:4000]
    count, prob = _columns([c for c, _ in BINOMIALS])[:4000], _columns([p for _, p in BINOMIALS])[:4000]
    got = {}
    for device in ("cpu", "webgpu"):
        torchweb.manual_seed(11)
        got[device] = [_drawn(torchweb.ops.samplers.standard_gamma(ours(alpha, device))),
                       _drawn(torchweb.poisson(ours(rate, device))),
                       _drawn(torchweb.binomial(ours(count, device), ours(prob, device)))]
    (g_cpu, p_cpu, b_cpu), (g_gpu, p_gpu, b_gpu) = got["cpu"], got["webgpu"]
    # (lavapipe: all counts equal, all gamma draws for alpha >= 0.5 within 1e-6; a GPU whose log
    # rounds otherwise may flip an acceptance test at its boundary, which changes that draw alone)
    assert (p_cpu == p_gpu).float().mean() > 0.999 and (b_cpu == b_gpu).float().mean() > 0.999
    rel = (g_cpu - g_gpu).abs() / g_cpu
    assert (rel[:, 1:] < 1e-4).float().mean() > 0.999, rel[:, 1:].max()
    assert (rel[:, 0] < 1e-4).float().mean() > 0.98


def test_sampling_reads_nothing_back_and_dispatches_one_kernel(monkeypatch):
    """Sampling on webgpu: no readback (the driver's read is never called) and one sampler
    dispatch per draw call, for every family that draws from these samplers."""
    from torchweb.backends.webgpu.runtime import get_runtime
    dev = "webgpu"
    a, b = ours(torch.tensor([0.3, 2.0, 40.0]), dev), ours(torch.tensor([1.5, 0.2, 7.0]), dev)
    rate, probs = ours(torch.tensor([0.5, 9.0, 3e4]), dev), ours(torch.tensor([0.1, 0.5, 0.97]), dev)
    count = ours(torch.tensor([10.0, 5e3, 1e6]), dev)
    # (the distributions are made first: their argument validation reads back, as PyTorch's syncs)
    made = [(D.Gamma(a, b), ["gamma"]), (D.Beta(a, b), ["gamma"]), (D.Dirichlet(a), ["gamma"]), (D.Chi2(a), ["gamma"]),
            (D.StudentT(a), ["gamma"]), (D.Poisson(rate), ["poisson"]), (D.Binomial(count, probs), ["binomial"]),
            (D.NegativeBinomial(count, probs), ["gamma", "poisson"])]
    calls = [(lambda d=d: d.sample((64,)), kinds) for d, kinds in made]
    calls += [(lambda: torchweb.poisson(rate), ["poisson"]), (lambda: torchweb.binomial(count, probs), ["binomial"])]
    torchweb.webgpu.synchronize()
    rt = get_runtime()
    reads, dispatched = [], []
    real_record = rt.record   # (every kernel's dispatch: head[1] the pipeline id)
    monkeypatch.setattr(rt.driver, "read", lambda *args: reads.append(args))

    def record(head, *args, **kwargs):
        dispatched.append(head[1])
        return real_record(head, *args, **kwargs)
    monkeypatch.setattr(rt, "record", record)
    for call, expected in calls:
        before = len(dispatched)
        call()
        kernels = {pid: key[1] for key, pid in rt._pipelines.items() if key[0] == "sample"}
        assert [kernels[pid] for pid in dispatched[before:] if pid in kernels] == expected
    rt.flush()
    assert reads == [], f"{len(reads)} readbacks while sampling"


@pytest.mark.parametrize("alpha", [0.01, 0.5, 3.0, 100.0])
def test_gamma_rsample_gradient_is_pytorchs_at_our_draws(alpha, device):
    """The implicit reparameterization gradient at the new sampler's draws, small and large
    alpha, against PyTorch's _standard_gamma_grad at the same draws (95th percentile of the
    relative error; the Wilson-Hilferty branch past alpha 128 is not reached here)."""
    torchweb.manual_seed(5)
    a = ours(torch.full((2000,), alpha), device, requires_grad=True)
    x = D.Gamma(a, 1.0).rsample()
    x.sum().backward()
    expected = torch._standard_gamma_grad(torch.full((2000,), alpha), _drawn(x.detach()))
    rel = ((_drawn(a.grad) - expected).abs() / expected.abs()).quantile(0.95)
    assert rel < 1e-3, f"95th percentile relative error {rel}"


def test_errors_dtypes_and_empty_as_pytorchs(device):
    bad = ours(torch.tensor([1.0, -1.0]), device)
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        torchweb.poisson(bad).tolist()   # (on webgpu at the readback: no sync at the call)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torchweb.poisson(ours(torch.tensor([3]), device))
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
        torchweb.binomial(ours(torch.tensor([3]), device), ours(torch.tensor([0.5]), device))
    with pytest.raises(RuntimeError, match="Found dtype Half but expected Float"):
        torchweb.binomial(ours(torch.tensor([3.0]), device), ours(torch.tensor([0.5], dtype=torch.float16), device))
    half = torchweb.poisson(ours(torch.full((4,), 3.0, dtype=torch.float16), device))
    assert half.dtype == torchweb.float16 and half.device.type == device
    assert tuple(torchweb.poisson(ours(torch.empty(0, 3), device)).shape) == (0, 3)
    # PyTorch's edge values: binomial with prob >= 1 gives count, with count <= 0 or prob <= 0 zero
    count, prob = torch.tensor([10.0, 10.0, -3.0, 5.0]), torch.tensor([1.0, 1.5, 0.5, 0.0])
    assert torchweb.binomial(ours(count, device), ours(prob, device)).tolist() == torch.binomial(count, prob).tolist()
    assert torchweb.ops.samplers.standard_gamma(ours(torch.tensor([0.0]), device)).tolist() == \
        torch._standard_gamma(torch.tensor([0.0])).tolist()


@pytest.mark.parametrize("kind", sorted(SAMPLERS))
def test_a_compiled_call_draws_anew_each_replay_as_eager(kind):
    """torchweb.compile: a replay patches the sampler's counter words as an eager call draws
    them (the same numbers as eager calls, new ones each time)."""
    draw = SAMPLERS[kind]
    f = torchweb.compile(lambda t: draw(t) + 0)
    x = ours(torch.linspace(0.05, 4.0, 500), "webgpu")
    torchweb.manual_seed(3)
    compiled = [f(x).tolist() for _ in range(6)]
    torchweb.manual_seed(3)
    eager = [(draw(x) + 0).tolist() for _ in range(6)]
    assert f.compile_stats["replays"] >= 3, f.compile_stats
    assert compiled == eager and len({tuple(c) for c in compiled}) == 6


def test_a_large_multinomial_counts_by_binomials_with_pytorchs_marginals(device):
    """Past ONE_HOT_MAX (total_count x draws x categories) Multinomial counts category by
    category with binomial draws: every row sums to total_count, each category's counts match
    PyTorch's draws of their law Binomial(n, p_k) (KS; PyTorch's own Multinomial would draw n
    categorical samples per row here), and two categories' covariance is -n p_i p_j (within 5
    standard errors)."""
    from torchweb.distributions import multinomial
    probs = torch.tensor([0.5, 0.05, 0.3, 0.15])
    n, draws = 100000, 4096
    assert n * draws * len(probs) > multinomial.ONE_HOT_MAX
    torch.manual_seed(0)
    theirs = torch.binomial(torch.full((draws, 4), float(n)), probs.expand(draws, 4))
    torchweb.manual_seed(0)
    mine = _drawn(D.Multinomial(n, ours(probs, device)).sample((draws,)))
    assert tuple(mine.shape) == (draws, 4) and bool((mine.sum(-1) == n).all())
    crit = math.sqrt(-math.log(0.001 / 2) / 2) * math.sqrt(2 / draws)
    for k, p in enumerate(probs.tolist()):
        d = ks_statistic(mine[:, k], theirs[:, k])
        assert d < crit, f"category {k}: KS statistic {d:.4f} (0.1% critical value {crit:.4f})"
    x = mine.double() - mine.double().mean(0)
    cov, want = (x[:, 0] * x[:, 2]).mean().item(), -n * 0.5 * 0.3
    # var of a product of jointly normal centered counts: var_i var_j + cov^2
    se = math.sqrt((n * 0.25 * n * 0.21 + want ** 2) / draws)
    assert abs(cov - want) <= 5 * se, (cov, want)
