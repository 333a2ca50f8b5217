"""Weight-only int8 (torchweb.ao.quantization: quantize_(model, int8_weight_only())): the
quantization is torchao's (checked against its formula run in PyTorch), the kernel that
dequantizes inside the matmul gives PyTorch's float32 (q * scale) @ x, and the layer's
state_dict round-trips through torch.save / torch.load (PyTorch's reader included)."""

import io
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torchweb as tw
from torchweb.ao.quantization import Int8WeightOnlyLinear, int8_weight_only, quantize_
from oracle import assert_close, ours, theirs

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def _torchao_quantize(w):
    """torchao's int8_weight_only in PyTorch: symmetric per row over [-128, 127]."""
    scale = (w.abs().amax(1) / 127.5).clamp(min=torch.finfo(torch.float32).eps)
    q = torch.clamp(torch.round(w * (1.0 / scale)[:, None]), -128, 127)
    return q.to(torch.int8), scale


def _layer(out_f, in_f, device, bias=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(in_f, out_f, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(out_f, in_f, generator=g))
        if bias:
            lin.bias.copy_(torch.randn(out_f, generator=g))
    ours_lin = tw.nn.Linear(in_f, out_f, bias=bias, device=device)
    ours_lin.load_state_dict({k: ours(v, device) for k, v in lin.state_dict().items()})
    return lin, ours_lin


def test_quantization_is_torchaos(device):
    lin, ol = _layer(33, 70, device)
    q_ref, scale_ref = _torchao_quantize(lin.weight.detach())
    layer = Int8WeightOnlyLinear.from_float(ol)
    assert_close(layer.weight_scale, scale_ref, rtol=1e-6, atol=0)
    assert torch.equal(theirs(layer.int8_weight()).to(torch.int8), q_ref)
    assert layer.weight.dtype is tw.int32 and tuple(layer.weight.shape) == (33, 18)


# M <= 4: the gemv kernel; past it the tiled one. K and N not multiples of 4 or 64 included.
@pytest.mark.parametrize("m,k,n", [(1, 64, 40), (1, 70, 33), (3, 37, 129), (4, 256, 8), (5, 70, 33),
                                   (67, 45, 130), (2, 1, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_matches_pytorch_dequantize_then_matmul(device, m, k, n, bias):
    lin, ol = _layer(n, k, device, bias, seed=m * 1000 + k)
    layer = Int8WeightOnlyLinear.from_float(ol)
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(k))
    q = theirs(layer.int8_weight()).float()
    scale = theirs(layer.weight_scale)
    expected = x @ (q * scale[:, None]).T + (lin.bias.detach() if bias else 0)
    with tw.no_grad():
        got = layer(ours(x, device))
    assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_gemv_without_barriers_matches(monkeypatch):
    """The gemv's barrier-free form (taken where barriers are costly, as on SwiftShader)."""
    from torchweb.backends.webgpu.runtime import get_runtime
    monkeypatch.setattr(get_runtime(), "barriers_costly", True)
    lin, ol = _layer(70, 37, "webgpu")
    layer = Int8WeightOnlyLinear.from_float(ol)
    x = torch.randn(2, 37)
    expected = x @ (theirs(layer.int8_weight()).float() * theirs(layer.weight_scale)[:, None]).T + lin.bias.detach()
    with tw.no_grad():
        assert_close(layer(ours(x, "webgpu")), expected, rtol=1e-5, atol=1e-5)


def test_batched_input_and_float16(device):
    lin, ol = _layer(24, 40, device)
    layer = Int8WeightOnlyLinear.from_float(ol)
    w = theirs(layer.int8_weight()).float() * theirs(layer.weight_scale)[:, None]
    x = torch.randn(2, 3, 40)
    with tw.no_grad():
        assert_close(layer(ours(x, device)), x @ w.T + lin.bias.detach(), rtol=1e-5, atol=1e-5)
        half = layer(ours(x.half(), device))
    # float16 input: computed in float32, rounded to float16 once at the end
    assert_close(half, (x.half().float() @ w.T + lin.bias.detach()).half(), rtol=1e-3, atol=1e-3)


def _mlp(device):
    tw.manual_seed(3)
    return tw.nn.Sequential(tw.nn.Embedding(50, 64), tw.nn.Linear(64, 256), tw.nn.GELU(),
                            tw.nn.Linear(256, 64), tw.nn.LayerNorm(64), tw.nn.Linear(64, 50)).to(device)


def test_model_logits_close_to_float32(device):
    """Stated tolerance: a quantized model's logits within 2% of the float logits' range of the
    float32 model's, and the same greedy choice at each position (this model, these tokens)."""
    model = _mlp(device)
    tokens = tw.tensor([[1, 7, 3, 9, 42, 0, 11, 5]], device=device)
    with tw.no_grad():
        ref = model(tokens)
        quantize_(model, int8_weight_only())
        got = model(tokens)
    assert sum(isinstance(mod, Int8WeightOnlyLinear) for mod in model.modules()) == 3
    r, g = theirs(ref), theirs(got)
    assert (g - r).abs().max() <= 0.02 * (r.max() - r.min())
    assert torch.equal(g.argmax(-1), r.argmax(-1))


def test_filter_fn_and_state_dict_round_trip(device):
    model = _mlp(device)
    quantize_(model, int8_weight_only(), filter_fn=lambda mod, fqn: isinstance(mod, tw.nn.Linear) and fqn != "5")
    assert isinstance(model[1], Int8WeightOnlyLinear) and type(model[5]) is tw.nn.Linear
    sd = model.state_dict()
    assert sd["1.weight"].dtype is tw.int32 and tuple(sd["1.weight"].shape) == (256, 16)
    assert set(k for k in sd if k.startswith("1.")) == {"1.weight", "1.weight_scale", "1.bias"}
    buf = io.BytesIO()
    tw.save(sd, buf)
    fresh = _mlp(device)
    quantize_(fresh, int8_weight_only(), filter_fn=lambda mod, fqn: isinstance(mod, tw.nn.Linear) and fqn != "5")
    buf.seek(0)
    fresh.load_state_dict(tw.load(buf))
    tokens = tw.tensor([[4, 2, 8]], device=device)
    with tw.no_grad():
        assert torch.equal(theirs(fresh(tokens)), theirs(model(tokens)))
    # PyTorch reads the same file: the packed words' bytes are the int8 matrix row by row
    buf.seek(0)
    theirs_sd = torch.load(buf)
    q = theirs_sd["1.weight"].view(torch.int8).reshape(256, -1)[:, :64]
    assert torch.equal(q.to(torch.int32), theirs(model[1].int8_weight()))


def test_refusals(device):
    layer = Int8WeightOnlyLinear.from_float(tw.nn.Linear(8, 4, device=device))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        with tw.no_grad():
            layer(tw.ones(2, 9, device=device))
    with pytest.raises(NotImplementedError, match="no backward"):
        layer(tw.ones(2, 8, device=device, requires_grad=True))
    with pytest.raises(TypeError, match="unsupported config"):
        quantize_(tw.nn.Sequential(tw.nn.Linear(2, 2)), object())


def test_torchao_import_through_the_alias():
    code = """
        import torchweb
        torchweb.install_torch_alias()
        from torchao.quantization import quantize_, int8_weight_only
        import torch
        m = torch.nn.Sequential(torch.nn.Linear(8, 4))
        quantize_(m, int8_weight_only())
        print(type(m[0]).__name__, quantize_ is torchweb.ao.quantization.quantize_)
    """
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       env=env, cwd="/", timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["Int8WeightOnlyLinear", "True"]


def test_compiled_decode_step_replays_the_same():
    """torch.compile captures the packed kernels and replays them (the decode step's use)."""
    tw.manual_seed(0)
    model = tw.nn.Sequential(tw.nn.Linear(64, 128), tw.nn.GELU(), tw.nn.Linear(128, 64)).to("webgpu")
    quantize_(model, int8_weight_only())
    step = tw.compile(model)
    with tw.no_grad():
        for _ in range(3):
            x = tw.randn(1, 64, device="webgpu")
            assert torch.equal(theirs(step(x)), theirs(model(x)))


def test_weight_past_the_binding_limit_runs_in_row_blocks():
    """a packed weight bigger than maxStorageBufferBindingSize (lowered here to 64 KiB): blocks
    of its rows through windows, each writing its columns of the output"""
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    rt.synchronize()
    saved = rt.max_binding
    lin, ol = _layer(300, 1000, "webgpu")   # 300 x 250 words: 300 KB
    layer = Int8WeightOnlyLinear.from_float(ol)
    x = torch.randn(3, 1000, generator=torch.Generator().manual_seed(1))
    w = theirs(layer.int8_weight()).float() * theirs(layer.weight_scale)[:, None]
    rt.set_binding_limit(64 << 10)
    try:
        with tw.no_grad():
            got = layer(ours(x, "webgpu"))
            got_tiled = layer(ours(x.repeat(3, 1), "webgpu"))
        rt.synchronize()
    finally:
        rt.set_binding_limit(saved)
    # (K = 1000: float32 sums in another order than PyTorch's)
    assert_close(got, x @ w.T + lin.bias.detach(), rtol=1e-4, atol=1e-4)
    assert_close(got_tiled, x.repeat(3, 1) @ w.T + lin.bias.detach(), rtol=1e-4, atol=1e-4)
