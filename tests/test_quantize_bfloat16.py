"""bfloat16 weights packed two to a word (quantize_(model, bfloat16_weight_only())): the packed
words are PyTorch's bfloat16 matrix's bytes, and the layer gives PyTorch's float32 product with
the bfloat16-rounded weight, through the gemv (few rows) and tiled kernels, on both devices. The
layer tests run for float16 too (float16_weight_only: the same kernels, unpacked with
unpack2x16float; tests/test_quantize_float16.py has the rest)."""

import io

import pytest
import torch

import torchweb as tw
from torchweb.ao.quantization import BFloat16WeightOnlyLinear, Float16WeightOnlyLinear, bfloat16_weight_only, quantize_
from oracle import assert_close, ours, theirs


HALVES = {"bfloat16": (torch.bfloat16, BFloat16WeightOnlyLinear), "float16": (torch.float16, Float16WeightOnlyLinear)}


def _pair(out_f, in_f, device, bias=True, seed=0):
    torch.manual_seed(seed)
    lin = torch.nn.Linear(in_f, out_f, bias=bias)
    ol = tw.nn.Linear(in_f, out_f, bias=bias, device=device)
    ol.load_state_dict({k: ours(v, device) for k, v in lin.state_dict().items()})
    return lin, ol


@pytest.mark.parametrize("m,k,n", [(1, 64, 40), (1, 71, 33), (4, 256, 9), (5, 70, 33), (67, 45, 130)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("half", list(HALVES))
def test_matches_pytorch_with_half_weight(device, m, k, n, bias, half):
    dtype, cls = HALVES[half]
    lin, ol = _pair(n, k, device, bias, seed=m + k)
    layer = cls.from_float(ol)
    packed = theirs(layer.weight)
    w16 = lin.weight.detach().to(dtype)
    # the words' bytes are the half matrix's, a zero half padding an odd row
    assert torch.equal(packed.view(dtype)[:, :k], w16)
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(k))
    with tw.no_grad():
        got = layer(ours(x, device))
    assert_close(got, x @ w16.float().T + (lin.bias.detach() if bias else 0), rtol=1e-5, atol=1e-5)


def test_quantize_and_state_dict(device):
    tw.manual_seed(0)
    model = tw.nn.Sequential(tw.nn.Linear(30, 64), tw.nn.ReLU(), tw.nn.Linear(64, 10)).to(device)
    x = tw.randn(3, 30, device=device)
    with tw.no_grad():
        ref = model(x)
        quantize_(model, bfloat16_weight_only())
        got = model(x)
    assert isinstance(model[0], BFloat16WeightOnlyLinear) and tuple(model[0].weight.shape) == (64, 15)
    # bfloat16 weights: within a few bfloat16 units of the float32 model's outputs
    assert (theirs(got) - theirs(ref)).abs().max() <= 2 ** -6 * theirs(ref).abs().max()
    buf = io.BytesIO()
    tw.save(model.state_dict(), buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=True)
    assert back["0.weight"].dtype == torch.int32 and tuple(back["0.weight"].shape) == (64, 15)


def test_pack_from_a_bfloat16_checkpoint(device):
    """bfloat16 weights stay as they were loaded: packing is exact"""
    w = torch.randn(8, 6).bfloat16()
    lin = tw.nn.Linear(6, 8, device=device)
    with tw.no_grad():
        lin.weight.copy_(ours(w, device))
    layer = BFloat16WeightOnlyLinear.from_float(lin)
    assert torch.equal(theirs(layer.weight).view(torch.bfloat16), w)


@pytest.mark.parametrize("half", list(HALVES))
def test_gemv_without_barriers_matches(monkeypatch, half):
    from torchweb.backends.webgpu.runtime import get_runtime
    monkeypatch.setattr(get_runtime(), "barriers_costly", True)
    dtype, cls = HALVES[half]
    lin, ol = _pair(70, 37, "webgpu")
    layer = cls.from_float(ol)
    x = torch.randn(3, 37)
    with tw.no_grad():
        got = layer(ours(x, "webgpu"))
    assert_close(got, x @ lin.weight.detach().to(dtype).float().T + lin.bias.detach(), rtol=1e-5, atol=1e-5)
