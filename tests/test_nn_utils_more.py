"""nn.utils.fusion (conv/linear + eval batch norm folded into one layer), skip_init and the
convert_conv*d_weight_memory_format utilities against PyTorch: fused weights and biases, the
fused layer's output equal to conv -> bn, gradients through fuse_*_weights, errors."""

import pytest
import torch

import torchweb
from oracle import assert_close, make, ours, theirs

tu, wu = torch.nn.utils, torchweb.nn.utils


def _bn_pair(nn_name, n, device, affine=True):
    ref = getattr(torch.nn, nn_name)(n, affine=affine)
    with torch.no_grad():
        ref.running_mean.copy_(make((n,)))
        ref.running_var.copy_(make((n,), low=0.5, high=2.0))
        if affine:
            ref.weight.copy_(make((n,)))
            ref.bias.copy_(make((n,)))
    mine = getattr(torchweb.nn, nn_name)(n, affine=affine).to(device)
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    return mine.eval(), ref.eval()


@pytest.mark.parametrize("conv,args,bn,shape,transpose", [
    ("Conv2d", (3, 4, 3), "BatchNorm2d", (2, 3, 5, 5), False),
    ("Conv1d", (3, 4, 2), "BatchNorm1d", (2, 3, 6), False),
    ("Conv3d", (2, 3, 2), "BatchNorm3d", (1, 2, 3, 3, 3), False),
    ("ConvTranspose2d", (3, 4, 2), "BatchNorm2d", (2, 3, 3, 3), True),
])
@pytest.mark.parametrize("bias,affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval(device, conv, args, bn, shape, transpose, bias, affine):
    ref_conv = getattr(torch.nn, conv)(*args, bias=bias).eval()
    mine_conv = getattr(torchweb.nn, conv)(*args, bias=bias).to(device).eval()
    mine_conv.load_state_dict({k: ours(v, device) for k, v in ref_conv.state_dict().items()})
    mine_bn, ref_bn = _bn_pair(bn, args[1], device, affine)
    e = tu.fuse_conv_bn_eval(ref_conv, ref_bn, transpose=transpose)
    g = wu.fuse_conv_bn_eval(mine_conv, mine_bn, transpose=transpose)
    assert type(g) is type(mine_conv) and g is not mine_conv
    assert type(g.weight) is torchweb.nn.Parameter and type(g.bias) is torchweb.nn.Parameter
    assert_close(g.weight.detach(), e.weight.detach())
    assert_close(g.bias.detach(), e.bias.detach())
    x = make(shape)
    assert_close(g(ours(x, device)), ref_bn(ref_conv(x)).detach(), rtol=1e-4, atol=1e-5)
    assert mine_conv.bias is None if not bias else mine_conv.bias is not g.bias   # the original untouched


def test_fuse_linear_bn_eval(device):
    for n_bn in (5, 1):
        ref_lin = torch.nn.Linear(3, 5).eval()
        mine_lin = torchweb.nn.Linear(3, 5).to(device).eval()
        mine_lin.load_state_dict({k: ours(v, device) for k, v in ref_lin.state_dict().items()})
        mine_bn, ref_bn = _bn_pair("BatchNorm1d", n_bn, device)
        e = tu.fuse_linear_bn_eval(ref_lin, ref_bn)
        g = wu.fuse_linear_bn_eval(mine_lin, mine_bn)
        assert_close(g.weight.detach(), e.weight.detach())
        assert_close(g.bias.detach(), e.bias.detach())
        x = make((4, 3))
        assert_close(g(ours(x, device)), e(x).detach(), rtol=1e-5, atol=1e-5)


def test_fuse_weights_gradients(device):
    vals = [make((4, 3, 2, 2)), make((4,)), make((4,)), make((4,), low=0.5, high=2), make((4,)), make((4,))]
    t = [v.clone().requires_grad_(True) for v in vals]
    w = [ours(v, device, requires_grad=True) for v in vals]
    e = tu.fuse_conv_bn_weights(t[0], t[1], t[2], t[3], 1e-3, t[4], t[5])
    g = wu.fuse_conv_bn_weights(w[0], w[1], w[2], w[3], 1e-3, w[4], w[5])
    assert_close(g, [x.detach() for x in e])
    # the fused Parameters are leaves, as PyTorch's; the gradient flows through fused = f(params) before wrapping
    assert g[0].is_leaf and g[0].requires_grad and g[1].requires_grad
    e2 = tu.fuse_linear_bn_weights(t[0].reshape(4, 12), None, t[2], t[3], 1e-5, t[4], t[5])
    g2 = wu.fuse_linear_bn_weights(w[0].reshape(4, 12), None, w[2], w[3], 1e-5, w[4], w[5])
    assert_close(g2, [x.detach() for x in e2])
    assert g2[1].requires_grad is e2[1].requires_grad


def test_fusion_errors(device):
    for lib, nn in ((tu, torch.nn), (wu, torchweb.nn)):
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.fuse_conv_bn_eval(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2).eval())
        with pytest.raises(AssertionError, match="running_mean and bn.running_var must not be None"):
            lib.fuse_conv_bn_eval(nn.Conv2d(2, 2, 1).eval(), nn.BatchNorm2d(2, track_running_stats=False).eval())
        with pytest.raises(AssertionError, match="linear.out_features=3 and bn.num_features=2"):
            lib.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())


def test_skip_init(device):
    m = wu.skip_init(torchweb.nn.Linear, 5, 2, device=device)
    r = tu.skip_init(torch.nn.Linear, 5, 2)
    assert repr(m) == repr(r) and m.weight.device == torchweb.device(device)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [(k, tuple(v.shape)) for k, v in r.state_dict().items()]
    m2 = wu.skip_init(torchweb.nn.Conv2d, in_channels=2, out_channels=3, kernel_size=2)
    assert tuple(m2.weight.shape) == (3, 2, 2, 2)

    class NoDevice(torchweb.nn.Module):
        def __init__(self, n):
            super().__init__()

    class TNoDevice(torch.nn.Module):
        def __init__(self, n):
            super().__init__()

    for lib, cls in ((tu, TNoDevice), (wu, NoDevice)):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            lib.skip_init(cls, 3)
        with pytest.raises(RuntimeError, match="Expected a Module; got"):
            lib.skip_init(int, 3)


def test_convert_weight_memory_format(device):
    for fn in ("convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"):
        ref = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 2), torch.nn.Sequential(torch.nn.Conv3d(3, 1, 1)))
        mine = torchweb.nn.Sequential(torchweb.nn.Conv2d(2, 3, 2), torchweb.nn.Sequential(torchweb.nn.Conv3d(3, 1, 1)))
        mine = mine.to(device)
        ref.load_state_dict({k: theirs(v) for k, v in mine.state_dict().items()})
        fmt = getattr(torchweb, "channels_last", None)
        assert getattr(wu, fn)(mine, fmt) is mine
        getattr(tu, fn)(ref, torch.channels_last if "2d" in fn else torch.channels_last_3d)
        x = make((1, 2, 3, 3))
        assert_close(mine[0](ours(x, device)), ref[0](x).detach(), rtol=1e-5, atol=1e-5)
        with pytest.raises(AttributeError):
            getattr(wu, fn)(3, fmt)
