"""Lazy modules and UninitializedParameter/UninitializedBuffer against PyTorch: the repr before
and after the first forward, the class each becomes, state_dict keys and shapes, the forward
and gradients once PyTorch's module holds the same values, loading a plain state_dict into a
lazy module, and the errors of using an uninitialized tensor."""

import copy

import pytest
import torch

import torchweb
from oracle import assert_close, make, ours, theirs

LAZY = [
    ("LazyLinear", (4,), {}, (2, 3)),
    ("LazyLinear", (4,), {"bias": False}, (2, 5, 3)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"stride": 2, "groups": 2}, (2, 6, 7, 7)),
    ("LazyConv2d", (4, 2), {"bias": False}, (3, 5, 5)),                 # unbatched
    ("LazyConv3d", (2, 2), {}, (1, 2, 3, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"groups": 2}, (2, 6, 5)),
    ("LazyConvTranspose2d", (3, 2), {"stride": 2, "output_padding": 1}, (2, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 2, 2, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"momentum": 0.3}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 2, 2, 3, 3)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": True, "track_running_stats": True}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"track_running_stats": False, "affine": False}, (2, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name,args,kw,shape", LAZY, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY)])
def test_lazy_module(device, name, args, kw, shape):
    mine = getattr(torchweb.nn, name)(*args, device=device, **kw)
    ref = getattr(torch.nn, name)(*args, **kw)
    assert repr(mine) == repr(ref)
    assert mine.has_uninitialized_params() == ref.has_uninitialized_params()
    assert [(k, type(v).__name__) for k, v in mine.state_dict().items()] == \
        [(k, type(v).__name__) for k, v in ref.state_dict().items()]
    x = make(shape)
    got = mine(ours(x, device))
    ref(x)   # materializes PyTorch's; then it takes our values
    assert type(mine).__name__ == type(ref).__name__ == name[4:]
    assert type(mine) is getattr(torchweb.nn, name[4:])
    assert repr(mine) == repr(ref)
    assert not hasattr(mine, "has_uninitialized_params")
    sd = mine.state_dict()
    assert [(k, tuple(v.shape)) for k, v in sd.items()] == [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    for v in sd.values():
        assert v.device == torchweb.device(device)
    ref.load_state_dict({k: theirs(v) for k, v in sd.items()})
    # the parameters were initialized as the plain module does: weights not all equal
    if "Conv" in name or "Linear" in name:
        w = theirs(mine.weight)
        assert w.std() > 0
    for p in mine.parameters():
        assert type(p) is torchweb.nn.Parameter and p.requires_grad
    x2 = make(shape)
    tx = x2.clone().requires_grad_(True)
    wx = ours(x2, device, requires_grad=True)
    e = ref(tx)
    g = mine(wx)
    assert_close(g, e, rtol=1e-4, atol=1e-5)
    up = make(tuple(e.shape))
    e.backward(up)
    g.backward(ours(up, device))
    assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    assert got.shape == e.shape


def test_lazy_load_state_dict(device):
    plain = torch.nn.Linear(5, 3)
    mine = torchweb.nn.LazyLinear(3, device=device)
    mine.load_state_dict({k: ours(v, device) for k, v in plain.state_dict().items()})
    assert type(mine).__name__ == "LazyLinear"          # still lazy until its first forward
    assert tuple(mine.weight.shape) == (3, 5)
    x = make((2, 5))
    assert_close(mine(ours(x, device)), plain(x).detach())
    assert type(mine) is torchweb.nn.Linear
    # an uninitialized state_dict into an uninitialized module, and a lazy batch norm's buffers
    a, b = torchweb.nn.LazyBatchNorm1d(), torchweb.nn.LazyBatchNorm1d()
    b.load_state_dict(a.state_dict())
    assert b.has_uninitialized_params()
    bn = torch.nn.BatchNorm1d(4)
    bn.running_mean.fill_(0.5)
    b.load_state_dict({k: ours(v, device) for k, v in bn.state_dict().items()})
    assert b.running_mean.tolist() == [0.5] * 4 and b.num_batches_tracked.dtype == torchweb.int64


def test_lazy_module_to_and_deepcopy(device):
    m = torchweb.nn.LazyLinear(2).to(device)
    assert m.weight.device == torchweb.device(device) and type(m.weight).__name__ == "UninitializedParameter"
    m2 = copy.deepcopy(m)
    assert type(m2.weight).__name__ == "UninitializedParameter"
    out = m2(torchweb.ones((1, 3), device=device))
    assert out.device == torchweb.device(device) and m.has_uninitialized_params()
    h = torchweb.nn.LazyBatchNorm1d().half()
    assert h.running_mean.dtype == torchweb.float16 and h.weight.dtype == torchweb.float16


def test_uninitialized_parameter_and_buffer():
    tp, wp = torch.nn.UninitializedParameter(), torchweb.nn.UninitializedParameter()
    assert repr(wp) == repr(tp) == "<UninitializedParameter>"
    assert wp.requires_grad is tp.requires_grad is True
    assert isinstance(wp, torchweb.nn.Parameter) and torchweb.nn.parameter.is_lazy(wp)
    assert not torchweb.nn.parameter.is_lazy(torchweb.nn.Parameter(torchweb.ones(1)))
    for use in (lambda p: p.shape, lambda p: p.sum(), lambda p: p.numel(), lambda p: p + 1):
        with pytest.raises(Exception) as info:
            use(tp)
        with pytest.raises(info.type) as mine:
            use(wp)
        assert str(mine.value).split(" in ")[0] == str(info.value).split(" in ")[0]
    assert tuple(wp.size()) == tuple(tp.size()) == (0,)
    wp.materialize((2, 3))
    tp.materialize((2, 3))
    assert type(wp) is torchweb.nn.Parameter and tuple(wp.shape) == (2, 3) and wp.requires_grad
    tb, wb = torch.nn.UninitializedBuffer(), torchweb.nn.UninitializedBuffer(dtype=torchweb.float16)
    assert repr(wb) == repr(tb) and wb.requires_grad is tb.requires_grad is False
    wb.materialize(4)
    assert type(wb) is torchweb.Tensor and tuple(wb.shape) == (4,) and wb.dtype == torchweb.float16


def test_lazy_errors(device):
    for build, shape in [(lambda nn: nn.LazyConv2d(4, 3), (2, 3)), (lambda nn: nn.LazyConv1d(4, 3, groups=2), (1, 3, 5))]:
        with pytest.raises(Exception) as info:
            build(torch.nn)(make(shape))
        with pytest.raises(info.type) as mine:
            build(torchweb.nn)(ours(make(shape), device))
        assert str(mine.value).replace("torchweb", "torch") == str(info.value)
    for fn in ("weight_norm", "spectral_norm"):
        with pytest.raises(ValueError) as info:
            getattr(torch.nn.utils, fn)(torch.nn.LazyLinear(3))
        with pytest.raises(ValueError) as mine:
            getattr(torchweb.nn.utils, fn)(torchweb.nn.LazyLinear(3))
        assert str(mine.value) == str(info.value)
