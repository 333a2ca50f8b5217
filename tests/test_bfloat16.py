"""torch.bfloat16 (held in float32 words whose values are bfloat16's: _dtype.py) against
PyTorch's bfloat16 on the cpu: conversions round to nearest-even exactly as c10::BFloat16, op
results are rounded to bfloat16, promotion is PyTorch's, printing and checkpoints (PyTorch's
BFloat16Storage, safetensors BF16) are the same both ways."""

import io

import pytest
import torch
from safetensors import torch as safetensors_torch

import torchweb as tw
from oracle import assert_close, ours, theirs

SPECIAL = [0.0, -0.0, 1.0, 1.00390625, 1.005859375, 1.0078125, 1.01171875, -2.5e-3, 3.14159265, 1e-40,
           -1e-42, 65504.0, 3.3895313892515355e38, 3.39e38, 3.4e38, float("inf"), -float("inf"), float("nan"),
           1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -8 + 2 ** -20]


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _bits(t):
    return torch.tensor(t.float().tolist() if t.dim() else [t.item()], dtype=torch.float32).view(torch.int32)


@pytest.mark.parametrize("how", ["to", "tensor", "method"])
def test_conversion_rounds_as_pytorch(device, how):
    x = torch.tensor(SPECIAL + torch.randn(200, generator=_g(0)).mul(1e3).tolist())
    src = ours(x, device)
    got = {"to": lambda: src.to(tw.bfloat16), "tensor": lambda: tw.tensor(x.tolist(), dtype=tw.bfloat16, device=device),
           "method": lambda: src.bfloat16()}[how]()
    want = x.to(torch.bfloat16)
    assert got.dtype is tw.bfloat16 and got.element_size() == 2
    assert torch.equal(_bits(got), _bits(want)) or torch.equal(theirs(got).isnan(), want.isnan())
    assert_close(got, want, rtol=0, atol=0)
    assert_close(got.float(), want.float(), rtol=0, atol=0)


def test_creation(device):
    assert_close(tw.full((2, 3), 1.1, dtype=tw.bfloat16, device=device), torch.full((2, 3), 1.1, dtype=torch.bfloat16),
                 rtol=0, atol=0)
    assert_close(tw.arange(0, 3, 0.37, dtype=tw.bfloat16, device=device), torch.arange(0, 3, 0.37, dtype=torch.bfloat16),
                 rtol=0, atol=0)
    assert_close(tw.zeros(3, dtype=tw.bfloat16, device=device), torch.zeros(3, dtype=torch.bfloat16))
    r = tw.randn(100, dtype=tw.bfloat16, device=device)
    assert r.dtype is tw.bfloat16 and torch.equal(theirs(r), theirs(r).float().bfloat16())


BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
          "scalar": lambda a, b: a * 3.3 + 1, "maximum": lambda a, b: a.maximum(b), "pow": lambda a, b: a.abs() ** 1.5}
UNARY = {"exp": lambda a: a.exp(), "log": lambda a: a.abs().log(), "sqrt": lambda a: a.abs().sqrt(),
         "tanh": lambda a: a.tanh(), "sigmoid": lambda a: a.sigmoid(), "neg": lambda a: -a,
         "relu": lambda a: a.relu(), "sin": lambda a: a.sin()}
ACTS = {"gelu": "gelu", "silu": "silu", "softmax": "softmax"}


def _pair(device, shape=(6, 33)):
    a = torch.randn(*shape, generator=_g(1)).bfloat16()
    b = torch.randn(*shape, generator=_g(2)).bfloat16()
    return a, b, ours(a, device), ours(b, device)


@pytest.mark.parametrize("name", BINARY)
def test_arithmetic_is_exact(device, name):
    """one float32 operation then one rounding: PyTorch's bfloat16 result to the bit"""
    a, b, A, B = _pair(device)
    assert_close(BINARY[name](A, B), BINARY[name](a, b), rtol=0, atol=0)


def _within_one_ulp(got, want):
    g, w = theirs(got).float(), want.float()
    ulp = torch.where(w == 0, torch.full_like(w, 2.0 ** -133), w.abs() * 2.0 ** -7)
    assert got.dtype is tw.bfloat16 and ((g - w).abs() <= ulp).all(), (g - w).abs().max()


@pytest.mark.parametrize("name", UNARY)
def test_math_within_one_bfloat16_unit(device, name):
    """float32 math functions differ from PyTorch's in the last float32 bits, which can move
    the bfloat16 rounding by one unit"""
    a, _, A, _ = _pair(device)
    _within_one_ulp(UNARY[name](A), UNARY[name](a))


@pytest.mark.parametrize("name", ["gelu", "silu", "softmax", "log_softmax", "layer_norm", "rms_norm", "linear",
                                  "matmul", "sum", "mean", "amax", "cumsum", "embedding", "var"])
def test_layers_and_reductions(device, name):
    a, b, A, B = _pair(device)
    w = torch.randn(33, generator=_g(3)).bfloat16()
    W = ours(w, device)
    F, f = tw.nn.functional, torch.nn.functional
    got, want = {
        "gelu": (F.gelu(A), f.gelu(a)), "silu": (F.silu(A), f.silu(a)),
        "softmax": (F.softmax(A, -1), f.softmax(a, -1)), "log_softmax": (F.log_softmax(A, -1), f.log_softmax(a, -1)),
        "layer_norm": (F.layer_norm(A, (33,), W, W), f.layer_norm(a, (33,), w, w)),
        "rms_norm": (F.rms_norm(A, (33,), W), f.rms_norm(a, (33,), w)),
        "linear": (F.linear(A, B, W[:6]), f.linear(a, b, w[:6])), "matmul": (A @ B.T, a @ b.T),
        "sum": (A.sum(1), a.sum(1)), "mean": (A.mean(), a.mean()), "amax": (A.amax(0), a.amax(0)),
        "cumsum": (A.cumsum(1), a.cumsum(1)), "var": (A.var(1), a.var(1)),
        "embedding": (F.embedding(tw.tensor([3, 0, 5], device=device), A), f.embedding(torch.tensor([3, 0, 5]), a)),
    }[name]
    _within_one_ulp(got, want)


@pytest.mark.parametrize("other,want", [("float16", "float32"), ("float32", "float32"), ("int64", "bfloat16"),
                                        ("uint8", "bfloat16"), ("bool", "bfloat16"), ("bfloat16", "bfloat16")])
def test_promotion_is_pytorchs(device, other, want):
    assert str(torch.promote_types(torch.bfloat16, getattr(torch, other))) == "torch." + want
    assert tw.promote_types(tw.bfloat16, getattr(tw, other)) is getattr(tw, want)
    a = torch.tensor([1.5, 2.25, 3.0], dtype=torch.bfloat16)
    b = torch.tensor([1, 0, 1]).to(getattr(torch, other))
    assert_close(ours(a, device) + ours(b, device), a + b, rtol=0, atol=0)
    assert (ours(a, device) * 2.5).dtype is tw.bfloat16 and (ours(a, device)[0] + ours(b, device)).dtype.name == \
        str((a[0] + b).dtype)[6:]


def test_printing_is_pytorchs(device):
    x = torch.tensor(SPECIAL[:12]).bfloat16()
    for t in (x, x[:3], x[2], x.reshape(3, 4)):
        assert repr(ours(t, device).cpu()).replace(", device='cpu'", "") == repr(t)


def test_module_bfloat16_linear_matches(device):
    torch.manual_seed(0)
    theirs_lin = torch.nn.Linear(20, 7).bfloat16()
    lin = tw.nn.Linear(20, 7, device=device).bfloat16()
    assert lin.weight.dtype is tw.bfloat16
    lin.load_state_dict({k: ours(v, device) for k, v in theirs_lin.state_dict().items()})
    x = torch.randn(4, 20, generator=_g(5)).bfloat16()
    _within_one_ulp(lin(ours(x, device)), theirs_lin(x))


def test_checkpoints_both_ways(device):
    sd = {"w": torch.randn(4, 5, generator=_g(6)).bfloat16()}
    sd["v"] = sd["w"][1:3, 2:]
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    got = tw.load(buf, map_location=device)
    assert got["w"].dtype is tw.bfloat16 and got["w"].device.type == device
    assert_close(got["w"], sd["w"], rtol=0, atol=0)
    assert_close(got["v"], sd["v"], rtol=0, atol=0)
    out = io.BytesIO()
    tw.save(got, out)
    out.seek(0)
    back = torch.load(out, weights_only=True)
    assert back["w"].dtype == torch.bfloat16 and torch.equal(back["w"], sd["w"]) and torch.equal(back["v"], sd["v"])
    # safetensors BF16: loaded as is, written as BF16
    st = tw.safetensors.load(safetensors_torch.save({"w": sd["w"]}), device=device)
    assert st["w"].dtype is tw.bfloat16
    assert_close(st["w"], sd["w"], rtol=0, atol=0)
    assert torch.equal(safetensors_torch.load(tw.safetensors.save(st))["w"], sd["w"])


def test_legacy_bfloat16_tensor_type(device):
    t = tw.BFloat16Tensor([1.5, 1.00390625])
    assert t.dtype is tw.bfloat16 and isinstance(t, tw.BFloat16Tensor) and not isinstance(t, tw.FloatTensor)
    assert t.tolist() == torch.BFloat16Tensor([1.5, 1.00390625]).tolist()
    assert ours(torch.ones(2).bfloat16(), device).type() == torch.ones(2).bfloat16().type()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("m,k,n", [(1, 64, 40), (5, 70, 33), (67, 256, 96), (1, 768, 300)])
def test_half_float_linear_is_pytorchs(device, dtype, m, k, n):
    """model.half() / model.bfloat16(): a Linear with bias is PyTorch's CPU addmm (the product
    and bias summed in float32, rounded once), within PyTorch's own tolerance for the dtype."""
    torch.manual_seed(m * k)
    theirs_lin = torch.nn.Linear(k, n).to(getattr(torch, dtype))
    lin = tw.nn.Linear(k, n, device=device).to(getattr(tw, dtype))
    lin.load_state_dict({key: ours(v, device) for key, v in theirs_lin.state_dict().items()})
    x = torch.randn(m, k, generator=_g(m)).to(getattr(torch, dtype))
    with tw.no_grad():
        got = lin(ours(x, device))
    want = theirs_lin(x)
    tol = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}[dtype]   # torch.testing's defaults
    assert_close(got, want, *tol)


def test_numpy_refused_and_pickle_keeps_the_dtype(device):
    import pickle
    t = ours(torch.tensor([1.5, -2.25]).bfloat16(), device)
    with pytest.raises(TypeError, match="BFloat16"):
        torch.tensor([1.0]).bfloat16().numpy()
    with pytest.raises(TypeError, match="BFloat16"):
        t.numpy()
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype is tw.bfloat16 and back.tolist() == [1.5, -2.25]


@pytest.mark.parametrize("m,k,n", [(64, 64, 64), (200, 300, 400), (1, 768, 768), (3, 5, 7)])
def test_matmul_results_are_bfloat16_values(device, m, k, n):
    """every matmul kernel's output rounded (the tiled kernels store vec4s)"""
    a = torch.randn(m, k, generator=_g(m)).bfloat16()
    b = torch.randn(k, n, generator=_g(n)).bfloat16()
    got = theirs(ours(a, device) @ ours(b, device))
    _within_one_ulp(ours(got, "cpu"), a @ b)
    v = torch.tensor((ours(a, device) @ ours(b, device)).float().tolist())
    assert torch.equal(v, v.bfloat16().float())


def test_scatter_reductions_round(device):
    a = torch.randn(6, 8, generator=_g(7)).bfloat16()
    src = torch.randn(3, 8, generator=_g(8)).bfloat16()
    idx = torch.tensor([0, 2, 5])
    _within_one_ulp(ours(a, device).index_add(0, ours(idx, device), ours(src, device)), a.index_add(0, idx, src))
    cols = torch.tensor([[0, 1, 7]] * 6)
    got = ours(a, device).scatter_add(1, ours(cols, device), ours(a[:, :3], device))
    _within_one_ulp(got, a.scatter_add(1, cols, a[:, :3]))


def test_scatter_assignments_keep_the_values(device):
    """index_copy_ (the KV cache's write), index_put_ and scatter_ store bfloat16 values as
    they are (webgpu's scatter once stored them as integers)."""
    a = torch.randn(6, 8, generator=_g(9)).bfloat16()
    src = torch.randn(2, 8, generator=_g(10)).bfloat16()
    idx = torch.tensor([4, 1])
    A, S, I = ours(a, device), ours(src, device), ours(idx, device)
    assert torch.equal(theirs(A.clone().index_copy_(0, I, S)), a.clone().index_copy_(0, idx, src))
    assert torch.equal(theirs(A.clone().index_put_((I,), S)), a.clone().index_put_((idx,), src))
    rows = torch.tensor([[1, 0, 5, 2, 3, 4, 0, 1]])
    assert torch.equal(theirs(A.clone().scatter_(0, ours(rows, device), S[:1])), a.clone().scatter_(0, rows, src[:1]))


def test_float16_matmul_rounded_without_shader_f16():
    """float16 held in f32 words (adapters without 'shader-f16', in a fresh interpreter): the
    tiled matmuls' results are float16 values too (backend.matmul rounds their span)"""
    import json
    import os
    import subprocess
    import sys
    code = ("import json, conftest, torchweb as tw\n"
            "assert 'shader-f16' not in tw.webgpu.features() and tw.float16.gpu_storage == 'f32'\n"
            "tw.manual_seed(0)\n"
            "a = tw.randn(64, 96, device='webgpu').half(); b = tw.randn(96, 128, device='webgpu').half()\n"
            "print(json.dumps([(a @ b).float().flatten().tolist(), a.float().flatten().tolist(), "
            "b.float().flatten().tolist()]))\n")
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src), TORCHWEB_NO_SHADER_F16="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                       cwd=os.path.dirname(__file__))
    assert r.returncode == 0, r.stderr
    got, a, b = (torch.tensor(v) for v in json.loads(r.stdout.splitlines()[-1]))
    assert torch.equal(got, got.half().float())
    want = a.reshape(64, 96).half() @ b.reshape(96, 128).half()
    torch.testing.assert_close(got.reshape(64, 128).half(), want)   # PyTorch's float16 tolerance
