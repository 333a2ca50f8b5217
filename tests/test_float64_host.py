"""float64 held on the host (torchweb/host64/): creation, elementwise math, scans, reductions,
indexing, cat/stack, casts, printing, compared with PyTorch's float64 to 1e-12; what it does not
do is refused with a message that names float64 and says to cast with .float()."""

import math

import pytest
import torch

import torchweb as tw
import torchweb.nn.functional as TF
from oracle import assert_close, ours


def h(t):
    """torch float64 tensor t as a torchweb float64 tensor."""
    return tw.tensor(t.tolist(), dtype=tw.float64)


def close64(got, want, rtol=1e-12, atol=0.0):
    assert isinstance(got, tw.Tensor) and got.dtype is tw.float64, type(got)
    assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
    assert want.dtype is torch.float64
    g = torch.tensor(got.tolist(), dtype=torch.float64).reshape(want.shape)
    torch.testing.assert_close(g, want, rtol=rtol, atol=atol, equal_nan=True)


def sample(*shape, special=False):
    g = torch.Generator().manual_seed(sum(shape) + 7)
    t = torch.randn(*shape, generator=g, dtype=torch.float64) * 3
    if special and t.numel() >= 5:
        flat = t.view(-1)
        flat[:5] = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0], dtype=torch.float64)
    return t


# -- creation -------------------------------------------------------------------------------
def test_creation_matches_pytorch_exactly():
    f64 = torch.float64
    close64(tw.linspace(0.0001, 0.02, 1000, dtype=tw.float64), torch.linspace(0.0001, 0.02, 1000, dtype=f64), rtol=0)
    close64(tw.linspace(-3, 7, 11, dtype=tw.float64), torch.linspace(-3, 7, 11, dtype=f64), rtol=0)
    close64(tw.arange(0, 1, 0.1, dtype=tw.float64), torch.arange(0, 1, 0.1, dtype=f64), rtol=0)
    close64(tw.arange(5, dtype=tw.float64), torch.arange(5, dtype=f64), rtol=0)
    close64(tw.zeros(2, 3, dtype=tw.float64), torch.zeros(2, 3, dtype=f64))
    close64(tw.ones((4,), dtype=tw.double), torch.ones((4,), dtype=torch.double))
    close64(tw.full((2, 2), 0.1, dtype=tw.float64), torch.full((2, 2), 0.1, dtype=f64))
    assert tuple(tw.empty(3, 1, dtype=tw.float64).shape) == (3, 1)
    data = [[0.1, 1 / 3], [2.0 ** -40, 1e300]]
    close64(tw.tensor(data, dtype=tw.float64), torch.tensor(data, dtype=f64), rtol=0)
    close64(tw.tensor(0.1, dtype=tw.float64), torch.tensor(0.1, dtype=f64), rtol=0)
    x = h(sample(2, 3))
    for name in ("zeros_like", "ones_like", "empty_like"):
        got = getattr(tw, name)(x)
        assert got.dtype is tw.float64 and tuple(got.shape) == (2, 3)
    close64(tw.full_like(x, 2.5), torch.full((2, 3), 2.5, dtype=f64))
    assert x.device.type == "cpu" and x.is_floating_point() and x.element_size() == 8


def test_float64_is_pytorchs_dtype():
    assert repr(tw.float64) == repr(torch.float64) and tw.double is tw.float64
    assert tw.promote_types(tw.float32, tw.float64) is tw.float64
    assert tw.finfo(tw.float64).eps == torch.finfo(torch.float64).eps
    with pytest.raises(TypeError, match="float64"):
        tw.set_default_dtype(tw.float64)


# -- elementwise ----------------------------------------------------------------------------
UNARY = ["abs", "neg", "sqrt", "rsqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin",
         "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "sigmoid", "floor", "ceil", "trunc", "round", "sign", "reciprocal", "square", "erf",
         "erfc", "lgamma", "frac", "relu", "exp2"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math(name):
    x = sample(4, 5, special=True)
    if name in ("asin", "acos", "atanh"):
        x = torch.cat([x.tanh(), torch.tensor([[1.0, -1.0, 2.0, math.nan, 0.0]], dtype=torch.float64)])
    want = getattr(torch, name)(x)
    close64(getattr(tw, name)(h(x)), want)      # torch.<name>
    close64(getattr(h(x), name)(), want)        # Tensor.<name>
    y = h(x)
    getattr(y, name + "_")()
    close64(y, want)


BINARY = ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum", "fmod", "remainder",
          "floor_divide", "hypot"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_math_with_broadcasting(name):
    a, b = sample(3, 4, special=True), sample(4)
    b[0] = 0.0
    if name == "pow":
        b = torch.tensor([0.5, 2.0, -1.0, 3.0], dtype=torch.float64)
    want = getattr(torch, name)(a, b)
    close64(getattr(tw, name)(h(a), h(b)), want)
    close64(getattr(h(a), name)(h(b)), want)
    if name not in ("atan2", "maximum", "minimum", "hypot"):    # (PyTorch's take tensors only)
        close64(getattr(tw, name)(h(a), 2.5), getattr(torch, name)(a, 2.5))


def test_operators_and_python_numbers():
    a, b = sample(2, 3, special=True), sample(2, 3)
    A, B = h(a), h(b)
    close64(A + B * 2 - 1 / B, a + b * 2 - 1 / b)
    close64(1.0 - A, 1.0 - a)
    close64(2 ** B, 2 ** b)
    close64(-A, -a)
    close64(abs(A) ** 0.5, abs(a) ** 0.5)
    close64(A // 2.0, a // 2.0)
    close64(A % 1.5, a % 1.5)
    close64(tw.add(A, B, alpha=3), torch.add(a, b, alpha=3))
    close64(tw.div(A, B, rounding_mode="trunc"), torch.div(a, b, rounding_mode="trunc"))
    close64(tw.div(A, B, rounding_mode="floor"), torch.div(a, b, rounding_mode="floor"))
    C = A.clone()
    C += B
    C *= 2
    close64(C, (a + b) * 2)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        assert_close(getattr(A, op)(B), getattr(a, op)(b))
    assert_close(A.isnan(), a.isnan())
    assert_close(tw.isfinite(A), torch.isfinite(a))


def test_clamp_lerp_where():
    a, b = sample(3, 4, special=True), sample(3, 4)
    close64(h(a).clamp(min=-1.0, max=2.0), a.clamp(min=-1.0, max=2.0))
    close64(tw.clip(h(a), 0, 0.999), torch.clip(a, 0, 0.999))
    close64(h(a).clamp(min=1e-20), a.clamp(min=1e-20))
    y = h(a)
    y.clamp_(max=0.5)
    close64(y, a.clamp(max=0.5))
    close64(tw.lerp(h(a), h(b), 0.25), torch.lerp(a, b, 0.25))
    cond = b > 0
    close64(tw.where(ours(cond, "webgpu"), h(a), h(b)), torch.where(cond, a, b))


def test_mixing_with_other_tensors_follows_pytorchs_promotion(device):
    a = sample(5)
    # a float64 tensor with a 0-d float32 tensor: float64 (the sigmoid schedule's v_end)
    v = torch.tensor(3.0).sigmoid()
    close64(h(a) + ours(v, device), a + v)
    close64(ours(v, device) - h(a), v - a)
    # a 0-d float64 tensor with a float32 tensor on the device: float32 there
    x = torch.randn(4)
    s = torch.tensor(0.7, dtype=torch.float64)
    assert_close(ours(x, device) * h(s), x * s)
    assert_close(h(s) * ours(x, device), s * x)
    assert (ours(x, device) * h(s)).device.type == device
    # integer tensors promote to float64
    i = torch.tensor([1, 2, 3, 4, 5])
    if device == "cpu":
        close64(h(a) + ours(i, device), a + i)


def test_float64_with_a_gpu_tensor_of_dims_is_refused_like_a_device_mismatch():
    with pytest.raises(RuntimeError, match="float64.*float"):
        h(sample(3)) + tw.ones(3, device="webgpu")


# -- scans and reductions -------------------------------------------------------------------
def test_noise_schedule_as_diffusion_models_compute_it():
    """lucidrains' denoising-diffusion-pytorch: linear and cosine schedules, cumprod, pad."""
    def schedule(T, F, timesteps=1000):
        betas = T.linspace(0.1 / timesteps, 20 / timesteps, timesteps, dtype=T.float64)
        alphas = 1.0 - betas
        alphas_cumprod = T.cumprod(alphas, dim=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
        out = {"sqrt_ac": T.sqrt(alphas_cumprod), "sqrt_1m_ac": T.sqrt(1.0 - alphas_cumprod),
               "log_1m_ac": T.log(1.0 - alphas_cumprod), "sqrt_recip": T.sqrt(1.0 / alphas_cumprod),
               "sqrt_recipm1": T.sqrt(1.0 / alphas_cumprod - 1)}
        pv = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
        out["post_log_var"] = T.log(pv.clamp(min=1e-20))
        out["coef1"] = betas * T.sqrt(alphas_cumprod_prev) / (1.0 - alphas_cumprod)
        t = T.linspace(0, timesteps, timesteps + 1, dtype=T.float64) / timesteps
        ac = T.cos((t + 0.008) / (1 + 0.008) * math.pi * 0.5) ** 2
        ac = ac / ac[0]
        out["cosine_betas"] = T.clip(1 - (ac[1:] / ac[:-1]), 0, 0.999)
        snr = alphas_cumprod / (1 - alphas_cumprod)
        out["snr"] = snr.clone().clamp_(max=5.0)
        return out
    got, want = schedule(tw, TF), schedule(torch, torch.nn.functional)
    for k in want:
        close64(got[k], want[k])
    buf = got["sqrt_ac"].to(tw.float32)     # register_buffer(name, val.to(torch.float32))
    assert buf.dtype is tw.float32
    assert_close(buf, want["sqrt_ac"].float())


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2)])
def test_reductions(dim):
    x = sample(3, 4, 2)
    for name in ("sum", "mean", "prod", "amax", "amin"):
        if name == "prod" and isinstance(dim, tuple):
            continue      # (PyTorch's prod takes one dim)
        if dim is None:
            want, got = getattr(torch, name)(x), getattr(tw, name)(h(x))
        else:
            want = getattr(torch, name)(x, dim, keepdim=True)
            got = getattr(h(x), name)(dim, keepdim=True)
        close64(got, want, rtol=1e-12, atol=1e-15)
    if dim is None:
        close64(tw.max(h(x)), torch.max(x))
        close64(h(x).min(), x.min())
    elif isinstance(dim, int):
        gv, gi = tw.max(h(x), dim=dim)
        wv, wi = torch.max(x, dim=dim)
        close64(gv, wv)
        assert_close(gi, wi)
        close64(h(x).min(dim)[0], x.min(dim)[0])


@pytest.mark.parametrize("dim", [None, 0, -1])
def test_aminmax(dim):
    """torch.aminmax reduces through the tensor's amin/amax, which a float64 tensor has."""
    x = sample(3, 4)
    want = torch.aminmax(x) if dim is None else torch.aminmax(x, dim=dim, keepdim=True)
    got = tw.aminmax(h(x)) if dim is None else tw.aminmax(h(x), dim=dim, keepdim=True)
    close64(got.min, want.min)
    close64(got.max, want.max)


def test_reductions_propagate_nan():
    x = sample(2, 5, special=True)
    close64(h(x).max(dim=1).values, x.max(dim=1).values)
    close64(h(x).sum(1), x.sum(1))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans(dim):
    x = sample(3, 5) * 0.3 + 1
    close64(tw.cumsum(h(x), dim), torch.cumsum(x, dim))
    close64(h(x).cumprod(dim=dim), x.cumprod(dim=dim))


# -- indexing, shapes, joins ----------------------------------------------------------------
def test_indexing_and_slicing():
    x = sample(4, 5, 3)
    X = h(x)
    for key in (1, -1, (1, 2), slice(1, 3), (slice(None), 2), (Ellipsis, 0), (None, 1),
                (slice(None, None, 2), slice(1, None), 0), ([0, 2, 3],), (1, [4, 0]),
                (slice(0, 0),)):
        close64(X[key], x[key])
    idx = torch.tensor([3, 0, 0])
    close64(X[ours(idx, "webgpu")], x[idx])            # indices on the GPU: read back
    mask = x > 0
    close64(X[ours(mask, "webgpu")], x[mask])
    assert X[1, 2, 0].item() == x[1, 2, 0].item()
    assert X.tolist() == x.tolist()
    with pytest.raises(IndexError):
        X[7]


def test_setitem_and_inplace_writes():
    x = sample(3, 4)
    X = h(x)
    x[0] = 1.5
    X[0] = 1.5
    x[:, 1] = torch.tensor([7.0, 8.0, 9.0], dtype=torch.float64)
    X[:, 1] = tw.tensor([7.0, 8.0, 9.0], dtype=tw.float64)
    x[x < 0] = 0.0
    X[X < 0] = 0.0
    close64(X, x)
    X.fill_(0.25)
    close64(X, torch.full((3, 4), 0.25, dtype=torch.float64))


def test_shapes_cat_stack_pad():
    x, y = sample(2, 3), sample(2, 3) + 1
    X, Y = h(x), h(y)
    close64(X.reshape(3, 2), x.reshape(3, 2))
    close64(X.view(-1), x.view(-1))
    close64(X.unsqueeze(1), x.unsqueeze(1))
    close64(X.unsqueeze(0).squeeze(0), x)
    close64(X.flatten(), x.flatten())
    close64(tw.cat([X, Y], dim=1), torch.cat([x, y], dim=1))
    close64(tw.cat([X, Y]), torch.cat([x, y]))
    close64(tw.stack([X, Y], dim=2), torch.stack([x, y], dim=2))
    close64(TF.pad(X, (2, 1), value=-1.0), torch.nn.functional.pad(x, (2, 1), value=-1.0))
    close64(TF.pad(X, (1, 1, 1, 0)), torch.nn.functional.pad(x, (1, 1, 1, 0)))
    assert len(list(X)) == 2
    close64(list(X)[1], x[1])


# -- casts and printing ---------------------------------------------------------------------
def test_casts_move_to_the_gpu_as_float32(device):
    x = sample(3, 2, special=True)
    X = h(x)
    for cast in (lambda t: t.float(), lambda t: t.to(torch.float32 if t is x else tw.float32),
                 lambda t: t.type(torch.FloatTensor if t is x else tw.FloatTensor)):
        assert_close(cast(X), cast(x))
        assert cast(X).device.type == tw.get_default_device().type
    moved = X.to(device)
    assert moved.device.type == device
    assert moved.dtype is (tw.float64 if device == "cpu" else tw.float32)
    finite = h(x.nan_to_num(0.0, 5.0, -5.0))
    assert_close(finite.long(), x.nan_to_num(0.0, 5.0, -5.0).long())
    assert_close(finite.half(), x.nan_to_num(0.0, 5.0, -5.0).half())
    assert_close(finite.to(tw.int32), x.nan_to_num(0.0, 5.0, -5.0).to(torch.int32))


def test_other_tensors_cast_to_float64(device):
    x = torch.randn(3, 4)
    got = ours(x, device).double()
    close64(got, x.double())
    close64(ours(x, device).to(tw.float64), x.to(torch.float64))
    close64(ours(x, device).to(dtype=tw.float64) * 3, x.double() * 3)


def test_printing_matches_pytorch():
    for t in (torch.tensor([0.1, 1 / 3, -2.5], dtype=torch.float64),
              torch.linspace(0, 1, 2000, dtype=torch.float64),
              torch.tensor([[1.0, 2.0], [3.0, 4e10]], dtype=torch.float64)):
        want = repr(t).replace("dtype=torch.float64", "device='cpu', dtype=torch.float64")
        assert repr(h(t)) == want


# -- what float64 does not do ---------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda X: X @ X.T if False else X @ X, lambda X: tw.matmul(X, X), lambda X: X.softmax(-1),
    lambda X: tw.nn.functional.relu6(X), lambda X: X.requires_grad_(),
    lambda X: tw.tensor([1.0], dtype=tw.float64, requires_grad=True), lambda X: tw.randn(2, dtype=tw.float64),
    lambda X: tw.nn.Linear(2, 2).double(), lambda X: X.sort(), lambda X: X.log_softmax(0),
    lambda X: tw.nn.functional.linear(X, X)])
def test_heavier_float64_work_is_refused_with_the_cast_to_use(call):
    X = h(sample(2, 2))
    with pytest.raises(RuntimeError, match=r"float64.*\.float\(\)"):
        call(X)


# -- a diffusion model's schedule, as a script written for PyTorch runs it --------------------
_DIFFUSION = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    t = torch.linspace(0, timesteps, steps, dtype=torch.float64) / timesteps
    alphas_cumprod = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)

def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))

class Diffusion(nn.Module):
    def __init__(self, model, timesteps=100):
        super().__init__()
        self.model = model
        betas = cosine_beta_schedule(timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
        register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))
        register_buffer("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod))
        register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1.0 - alphas_cumprod))
        posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
        register_buffer("posterior_log_variance_clipped", torch.log(posterior_variance.clamp(min=1e-20)))

    def forward(self, x0, t, noise):
        x = extract(self.sqrt_alphas_cumprod, t, x0.shape) * x0 + \\
            extract(self.sqrt_one_minus_alphas_cumprod, t, x0.shape) * noise
        return F.mse_loss(self.model(x), noise)

def run(x0, t, noise, w):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(4, 4)
    with torch.no_grad():
        model.weight.copy_(torch.tensor(w)); model.bias.zero_()
    d = Diffusion(model).to(device)
    loss = d(torch.tensor(x0, device=device), torch.tensor(t, device=device), torch.tensor(noise, device=device))
    loss.backward()
    return {"device": str(d.sqrt_alphas_cumprod.device), "loss": loss.item(),
            "grad": model.weight.grad.tolist(),
            "buffers": {k: v.tolist() for k, v in d.named_buffers()}}
'''


def test_a_diffusion_script_runs_under_the_torch_alias_on_the_gpu():
    import json
    import os
    import subprocess
    import sys
    g = torch.Generator().manual_seed(0)
    x0, noise = torch.randn(3, 4, generator=g).tolist(), torch.randn(3, 4, generator=g).tolist()
    w, t = torch.randn(4, 4, generator=g).tolist(), [5, 50, 99]
    args = f"{x0!r}, {t!r}, {noise!r}, {w!r}"
    code = ("import json, torchweb\ntorchweb.install_torch_alias()\n" + _DIFFUSION +
            f"\nprint(json.dumps(run({args})))\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120, cwd=os.path.dirname(__file__))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    scope = {}
    exec(compile(_DIFFUSION, "diffusion", "exec"), scope)     # the same script on PyTorch's CPU
    want = scope["run"](x0, t, noise, w)
    assert got["device"] == "webgpu:0" and want["device"] == "cpu"
    assert got["loss"] == pytest.approx(want["loss"], rel=1e-5)
    torch.testing.assert_close(torch.tensor(got["grad"]), torch.tensor(want["grad"]), rtol=1e-5, atol=1e-6)
    for k, v in want["buffers"].items():
        torch.testing.assert_close(torch.tensor(got["buffers"][k]), torch.tensor(v), rtol=0, atol=0)


@pytest.mark.filterwarnings("ignore:To copy construct")
def test_statistics_and_transposes_for_data_preparation():
    x = sample(5, 3)
    X = h(x)
    close64((X - X.mean(0)) / X.std(0), (x - x.mean(0)) / x.std(0))        # standardizing columns
    close64(X.var(), x.var())
    close64(X.var(1, keepdim=True, correction=0), x.var(1, keepdim=True, correction=0))
    close64(X.std(unbiased=False), x.std(unbiased=False))
    assert_close(X.argmax(), x.argmax())
    assert_close(X.argmin(dim=1), x.argmin(dim=1))
    close64(X.t(), x.t())
    close64(X.T, x.T)
    close64(X.transpose(0, 1), x.transpose(0, 1))
    y = sample(2, 3, 4)
    close64(h(y).permute(2, 0, 1), y.permute(2, 0, 1))
    close64(tw.permute(h(y), (1, 2, 0)), torch.permute(y, (1, 2, 0)))
    close64(h(y).mT, y.mT)
    close64(tw.tensor(X), torch.tensor(x))          # a copy keeps float64
    assert tw.tensor(X) is not X
