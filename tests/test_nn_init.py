"""nn.init against PyTorch: gains and fans exactly, deterministic initializers exactly, random
ones by their statistics (bounds from PyTorch's formulas, means, stds) and by determinism under
torchweb.manual_seed, errors by type and message. torchweb's generator is not PyTorch's, so
seeded values are not compared."""

import math
import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, theirs

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]


@pytest.mark.parametrize("name", NONLINEARITIES)
@pytest.mark.parametrize("param", [None, 0, 0.2, 3, math.sqrt(5)])
def test_calculate_gain(name, param):
    got = torchweb.nn.init.calculate_gain(name, param)
    expected = torch.nn.init.calculate_gain(name, param)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("args", [("foo",), ("leaky_relu", "x"), ("leaky_relu", True), ("leaky_relu", [1])])
def test_calculate_gain_errors(args):
    with pytest.raises(ValueError) as e:
        torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError, match=str(e.value).replace("[", r"\[").replace("]", r"\]")):
        torchweb.nn.init.calculate_gain(*args)


FAN_SHAPES = [(3, 4), (5, 2, 3), (8, 4, 3, 3), (2, 3, 2, 2, 2), (7, 0), (0, 3, 2)]


@pytest.mark.parametrize("shape", FAN_SHAPES)
def test_fans(shape):
    t, w = torch.empty(shape), torchweb.empty(shape, device="cpu")
    assert torchweb.nn.init._calculate_fan_in_and_fan_out(w) == torch.nn.init._calculate_fan_in_and_fan_out(t)
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert torchweb.nn.init._calculate_correct_fan(w, mode) == torch.nn.init._calculate_correct_fan(t, mode)


def _same_error(fn, shape, **kw):
    """fn (a name in nn.init) raises the same exception type and message in both libraries."""
    with pytest.raises(Exception) as e:
        getattr(torch.nn.init, fn)(torch.empty(shape), **kw)
    with pytest.raises(type(e.value)) as mine:
        getattr(torchweb.nn.init, fn)(torchweb.empty(shape, device="cpu"), **kw)
    assert str(mine.value) == str(e.value)


@pytest.mark.parametrize("fn,shape,kw", [
    ("_calculate_fan_in_and_fan_out", (5,), {}),
    ("_calculate_fan_in_and_fan_out", (), {}),
    ("xavier_uniform_", (5,), {}),
    ("xavier_normal_", (5,), {}),
    ("kaiming_uniform_", (5,), {}),
    ("kaiming_normal_", (4, 3), {"mode": "fan_avg"}),
    ("kaiming_uniform_", (4, 3), {"nonlinearity": "softplus"}),
    ("eye_", (2, 2, 2), {}),
    ("eye_", (3,), {}),
    ("dirac_", (3, 3), {}),
    ("dirac_", (3, 3, 3, 3, 3, 3), {}),
    ("dirac_", (3, 2, 3), {"groups": 2}),
    ("orthogonal_", (4,), {}),
    ("sparse_", (4, 3, 2), {"sparsity": 0.1}),
    ("uniform_", (3,), {"a": 1.0, "b": 0.0}),
    ("normal_", (3,), {"std": -1.0}),
])
def test_errors(fn, shape, kw):
    _same_error(fn, shape, **kw)


def test_integer_tensors_refused():
    for fn in ("uniform_", "normal_"):
        with pytest.raises(NotImplementedError):
            getattr(torch.nn.init, fn)(torch.empty(3, dtype=torch.int32))
        with pytest.raises(NotImplementedError):
            getattr(torchweb.nn.init, fn)(torchweb.empty(3, dtype=torchweb.int32, device="cpu"))


# -- deterministic initializers: exactly PyTorch's values ------------------------------------
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (0, 3), ()])
@pytest.mark.parametrize("name,args", [("constant_", (0.37,)), ("ones_", ()), ("zeros_", ()),
                                       ("constant_", (-2,))])
def test_fills(device, shape, name, args):
    t = torch.full(shape, 9.0)
    w = torchweb.full(shape, 9.0, device=device)
    r = getattr(torchweb.nn.init, name)(w, *args)
    assert r is w
    getattr(torch.nn.init, name)(t, *args)
    assert_close(w, t, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (0, 3), (1, 1)])
def test_eye(device, shape):
    t, w = torch.full(shape, 9.0), torchweb.full(shape, 9.0, device=device)
    torch.nn.init.eye_(t)
    assert torchweb.nn.init.eye_(w) is w
    assert_close(w, t, rtol=0, atol=0)


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((4, 2, 3), 2), ((6, 4, 3, 3), 1),
                                          ((6, 4, 3, 3), 3), ((2, 5, 3, 4), 1), ((4, 2, 3, 2, 5), 2),
                                          ((3, 3, 2, 2, 2), 1), ((0, 2, 3), 1)])
def test_dirac(device, shape, groups):
    t, w = torch.full(shape, 9.0), torchweb.full(shape, 9.0, device=device)
    torch.nn.init.dirac_(t, groups)
    assert torchweb.nn.init.dirac_(w, groups) is w
    assert_close(w, t, rtol=0, atol=0)


def test_dirac_convolution_is_identity(device):
    w = torchweb.nn.init.dirac_(torchweb.empty(3, 3, 3, 3, device=device))
    x = torchweb.randn(2, 3, 5, 5, device=device)
    y = torchweb.nn.functional.conv2d(x, w, padding=1)
    assert torchweb.equal(y, x)


def test_fills_on_a_leaf_that_requires_grad(device):
    """The initializers run under no_grad: in place on a leaf that requires grad, no history."""
    w = torchweb.empty(3, 4, device=device, requires_grad=True)
    for fn in (torchweb.nn.init.zeros_, torchweb.nn.init.xavier_uniform_, torchweb.nn.init.orthogonal_,
               torchweb.nn.init.trunc_normal_, lambda t: torchweb.nn.init.sparse_(t, 0.3),
               torchweb.nn.init.eye_):
        assert fn(w) is w
        assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_non_contiguous_targets(device):
    base = torchweb.zeros(6, 8, device=device)
    view = base[::2, 1::2]                       # (3, 4) strided
    torchweb.nn.init.eye_(view)
    t = torch.zeros(6, 8)
    torch.nn.init.eye_(t[::2, 1::2])
    assert_close(base, t, rtol=0, atol=0)
    base2 = torchweb.zeros(4, 6, device=device)
    torchweb.nn.init.orthogonal_(base2.t())      # (6, 4) transposed
    q = base2.t()
    assert_close(q.t() @ q, torch.eye(4), atol=1e-5, rtol=0)


# -- random initializers: statistics and determinism --------------------------------------------
BIG = (256, 512)


def _stats(w):
    v = theirs(w).double()
    return v.mean().item(), v.std().item(), v.min().item(), v.max().item()


def _uniform_bound_check(w, bound):
    mean, std, lo, hi = _stats(w)
    assert -bound <= lo and hi <= bound
    assert lo < -0.99 * bound and hi > 0.99 * bound        # the bound is reached: it is PyTorch's
    assert abs(mean) < 0.02 * bound
    assert abs(std - bound / math.sqrt(3)) < 0.02 * bound


@pytest.mark.parametrize("shape", [BIG, (64, 32, 3, 3)])
@pytest.mark.parametrize("a,mode,nl", [(math.sqrt(5), "fan_in", "leaky_relu"), (0, "fan_out", "relu"),
                                       (0.1, "fan_in", "leaky_relu"), (0, "fan_in", "tanh")])
def test_kaiming_uniform(device, shape, a, mode, nl):
    w = torchweb.empty(shape, device=device)
    assert torchweb.nn.init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nl) is w
    t = torch.empty(shape)
    fan = torch.nn.init._calculate_correct_fan(t, mode)
    bound = math.sqrt(3.0) * torch.nn.init.calculate_gain(nl, a) / math.sqrt(fan)
    _uniform_bound_check(w, bound)


@pytest.mark.parametrize("a,mode,nl", [(0, "fan_in", "relu"), (0.2, "fan_out", "leaky_relu")])
def test_kaiming_normal(device, a, mode, nl):
    w = torchweb.empty(BIG, device=device)
    torchweb.nn.init.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nl)
    std = torch.nn.init.calculate_gain(nl, a) / math.sqrt(torch.nn.init._calculate_correct_fan(torch.empty(BIG), mode))
    m, s, _, _ = _stats(w)
    assert abs(m) < 0.02 * std and abs(s - std) < 0.02 * std


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(device, gain):
    shape = (128, 64, 3)
    w = torchweb.empty(shape, device=device)
    torchweb.nn.init.xavier_uniform_(w, gain=gain)
    fan_in, fan_out = 64 * 3, 128 * 3
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    _uniform_bound_check(w, math.sqrt(3.0) * std)
    torchweb.nn.init.xavier_normal_(w, gain=gain)
    m, s, _, _ = _stats(w)
    assert abs(m) < 0.03 * std and abs(s - std) < 0.03 * std


def test_uniform_normal(device):
    w = torchweb.empty(BIG, device=device)
    torchweb.nn.init.uniform_(w, -0.5, 1.5)
    m, s, lo, hi = _stats(w)
    assert -0.5 <= lo < -0.49 and 1.49 < hi < 1.5 and abs(m - 0.5) < 0.01 and abs(s - 2 / math.sqrt(12)) < 0.01
    torchweb.nn.init.normal_(w, mean=3.0, std=0.5)
    m, s, _, _ = _stats(w)
    assert abs(m - 3.0) < 0.01 and abs(s - 0.5) < 0.01


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04),
                                          (1.0, 2.0, 0.0, 5.0), (0.0, 1.0, 1.0, 3.0)])
def test_trunc_normal(device, mean, std, a, b):
    w = torchweb.empty(BIG, device=device)
    assert torchweb.nn.init.trunc_normal_(w, mean=mean, std=std, a=a, b=b) is w
    got_mean, got_std, lo, hi = _stats(w)
    assert a <= lo and hi <= b
    # the truncated normal's own moments (scipy's formulas) from PyTorch's double arithmetic
    al, be = torch.tensor((a - mean) / std, dtype=torch.float64), torch.tensor((b - mean) / std, dtype=torch.float64)
    n = torch.distributions.Normal(torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
    z = n.cdf(be) - n.cdf(al)
    pa, pb = n.log_prob(al).exp(), n.log_prob(be).exp()
    exp_mean = mean + std * (pa - pb) / z
    exp_var = std ** 2 * (1 + (al * pa - be * pb) / z - ((pa - pb) / z) ** 2)
    assert abs(got_mean - exp_mean.item()) < 0.01 * std
    assert abs(got_std - exp_var.sqrt().item()) < 0.01 * std


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        torchweb.nn.init.trunc_normal_(torchweb.empty(10, device="cpu"), mean=5.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape,gain", [((32, 32), 1.0), ((20, 50), 1.0), ((50, 20), 2.0),
                                        ((6, 3, 2, 2), 1.0), ((1, 5), 1.0), ((5, 1), 1.0)])
def test_orthogonal(device, shape, gain):
    w = torchweb.empty(shape, device=device)
    assert torchweb.nn.init.orthogonal_(w, gain=gain) is w
    f = theirs(w).reshape(shape[0], -1).double() / gain
    rows, cols = f.shape
    eye = f @ f.T if rows <= cols else f.T @ f
    torch.testing.assert_close(eye, torch.eye(min(rows, cols), dtype=torch.float64), atol=1e-5, rtol=0)


def test_orthogonal_float16(device):
    w = torchweb.empty(16, 16, dtype=torchweb.float16, device=device)
    torchweb.nn.init.orthogonal_(w)
    f = theirs(w).double()
    torch.testing.assert_close(f @ f.T, torch.eye(16, dtype=torch.float64), atol=5e-3, rtol=0)


def test_sparse(device):
    rows, cols, sparsity, std = 40, 300, 0.3, 0.5
    w = torchweb.empty(rows, cols, device=device)
    assert torchweb.nn.init.sparse_(w, sparsity, std=std) is w
    v = theirs(w)
    zeros_per_col = (v == 0).sum(0)
    assert torch.equal(zeros_per_col, torch.full((cols,), math.ceil(sparsity * rows)))
    nz = v[v != 0].double()
    assert abs(nz.std().item() - std) < 0.03 * std
    # the zeros are in different rows from column to column
    assert len({tuple((v[:, c] == 0).nonzero().flatten().tolist()) for c in range(cols)}) > cols // 2


INITS = [
    lambda t, g=None: torchweb.nn.init.uniform_(t, -1, 2, generator=g),
    lambda t, g=None: torchweb.nn.init.normal_(t, 0.5, 2, generator=g),
    lambda t, g=None: torchweb.nn.init.trunc_normal_(t, generator=g),
    lambda t, g=None: torchweb.nn.init.xavier_uniform_(t, generator=g),
    lambda t, g=None: torchweb.nn.init.xavier_normal_(t, generator=g),
    lambda t, g=None: torchweb.nn.init.kaiming_uniform_(t, a=math.sqrt(5), generator=g),
    lambda t, g=None: torchweb.nn.init.kaiming_normal_(t, generator=g),
    lambda t, g=None: torchweb.nn.init.orthogonal_(t, generator=g),
    lambda t, g=None: torchweb.nn.init.sparse_(t, 0.5, generator=g),
]


@pytest.mark.parametrize("k", range(len(INITS)))
def test_determinism(device, k):
    init = INITS[k]
    torchweb.manual_seed(123)
    a = init(torchweb.empty(6, 5, device=device)).tolist()
    b = init(torchweb.empty(6, 5, device=device)).tolist()
    torchweb.manual_seed(123)
    assert init(torchweb.empty(6, 5, device=device)).tolist() == a
    assert a != b
    g = torchweb.Generator(device).manual_seed(7)
    c = init(torchweb.empty(6, 5, device=device), g).tolist()
    g.manual_seed(7)
    torchweb.manual_seed(999)   # the default generator does not matter when one is given
    assert init(torchweb.empty(6, 5, device=device), g).tolist() == c


def test_zero_element_kaiming_warns(device):
    for fn in (torchweb.nn.init.kaiming_uniform_, torchweb.nn.init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            w = torchweb.empty(0, 3, device=device)
            assert fn(w) is w
    w = torchweb.empty(0, 3, device=device)
    assert torchweb.nn.init.orthogonal_(w) is w
    assert torchweb.nn.init.xavier_uniform_(torchweb.empty(0, 4, device=device)).shape == (0, 4)


def test_deprecated_aliases():
    for old in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        fn = getattr(torchweb.nn.init, old)
        assert fn.__name__ == old
        args = {"constant": (1.0,), "sparse": (0.1,)}.get(old, ())
        shape = (3, 3, 3) if old == "dirac" else (3, 3)
        with pytest.warns(FutureWarning, match=f"nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`"):
            fn(torchweb.empty(shape, device="cpu"), *args)


def test_signatures_match_pytorch():
    import inspect
    for name in torch.nn.init.__all__ + ["_calculate_fan_in_and_fan_out", "_calculate_correct_fan"]:
        ours_fn = getattr(torchweb.nn.init, name)
        theirs_fn = getattr(torch.nn.init, name)
        if name in torch.nn.init.__all__ and not name.endswith("_") and name != "calculate_gain":
            continue  # the deprecated wrappers take *args, **kwargs in both
        p1 = [(p.name, p.default) for p in inspect.signature(ours_fn).parameters.values()]
        p2 = [(p.name, p.default) for p in inspect.signature(theirs_fn).parameters.values()]
        assert p1 == p2, name


def test_linear_style_call():
    """nn.Linear.reset_parameters' call, exactly as PyTorch writes it."""
    w = torchweb.empty(10, 40, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchweb.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    fan_in, _ = torchweb.nn.init._calculate_fan_in_and_fan_out(w)
    assert fan_in == 40
    assert float(w.abs().max()) <= 1 / math.sqrt(fan_in)
