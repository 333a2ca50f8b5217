"""The old hook forms nn.utils.weight_norm / remove_weight_norm and nn.utils.spectral_norm /
remove_spectral_norm against PyTorch's from the same weights (and, for spectral_norm, the same
u and v): parameters and buffers they register, forward in train and eval, the power iteration's
buffers after each step, gradients, state_dict keys and metadata, removal, errors."""

import warnings

import pytest
import torch

import torchweb
from nn_layer_oracle import compare_state, pair
from oracle import assert_close, make, ours, theirs

tu, wu = torch.nn.utils, torchweb.nn.utils


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kw)


@pytest.mark.parametrize("build,dim,shape", [
    (lambda nn: nn.Linear(4, 3), 0, (2, 4)),
    (lambda nn: nn.Linear(4, 3), None, (2, 4)),
    (lambda nn: nn.Conv2d(2, 3, 3), 1, (1, 2, 5, 5)),
    (lambda nn: nn.ConvTranspose1d(2, 3, 2), 0, (2, 2, 4)),
])
def test_weight_norm(device, build, dim, shape):
    mine, ref = pair(build, device)
    with pytest.warns(FutureWarning):
        wu.weight_norm(mine, dim=dim)
    _quiet(tu.weight_norm, ref, dim=dim)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    compare_state(mine, ref)
    x = make(shape)
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e, g = ref(tx), mine(wx)
    assert_close(g, e, rtol=1e-5, atol=1e-5)
    up = make(tuple(e.shape))
    e.backward(up)
    g.backward(ours(up, device))
    assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    # the weight is recomputed from g and v before each forward
    with torch.no_grad():
        ref.weight_g.mul_(2)
    with torchweb.no_grad():
        mine.weight_g.mul_(2)
    assert_close(mine(wx), ref(tx), rtol=1e-5, atol=1e-5)
    wu.remove_weight_norm(mine)
    tu.remove_weight_norm(ref)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert type(mine.weight) is torchweb.nn.Parameter
    compare_state(mine, ref)
    assert len(mine._forward_pre_hooks) == 0


def test_weight_norm_errors():
    for lib in (tu, wu):
        m = (torch if lib is tu else torchweb).nn.Linear(2, 2)
        _quiet(lib.weight_norm, m)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
            _quiet(lib.weight_norm, m)
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found in Linear"):
            lib.remove_weight_norm(m, "bias")


def _spectral_pair(build, device, **kw):
    mine, ref = build(torchweb.nn).to(device), build(torch.nn)
    wu.spectral_norm(mine, **kw)
    tu.spectral_norm(ref, **kw)
    sd = mine.state_dict()
    assert list(sd) == list(ref.state_dict())
    ref.load_state_dict({k: theirs(v) for k, v in sd.items()})
    return mine, ref


@pytest.mark.parametrize("build,kw,shape", [
    (lambda nn: nn.Linear(5, 3), {}, (2, 5)),
    (lambda nn: nn.Linear(5, 3), {"n_power_iterations": 3, "eps": 1e-6}, (2, 5)),
    (lambda nn: nn.Conv2d(2, 4, 3), {}, (1, 2, 5, 5)),
    (lambda nn: nn.ConvTranspose2d(2, 4, 3), {}, (1, 2, 3, 3)),        # dim 1 by default
    (lambda nn: nn.Conv1d(3, 4, 2), {"dim": 1}, (2, 3, 5)),
])
def test_spectral_norm(device, build, kw, shape):
    mine, ref = _spectral_pair(build, device, **kw)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in ref.named_buffers()]
    for step in range(3):
        x = make(shape)
        tx = x.clone().requires_grad_(True)
        wx = ours(x, device, requires_grad=True)
        e, g = ref(tx), mine(wx)
        assert_close(g, e, rtol=1e-4, atol=1e-5)
        compare_state(mine, ref, rtol=1e-4, atol=1e-5)         # u and v after the power iteration
        up = make(tuple(e.shape))
        e.backward(up)
        g.backward(ours(up, device))
        assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)
        for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
            assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-4)
    mine.eval()
    ref.eval()
    x = make(shape)
    assert_close(mine(ours(x, device)), ref(x), rtol=1e-4, atol=1e-5)
    compare_state(mine, ref, rtol=1e-4, atol=1e-5)
    # the version metadata PyTorch records, and a round trip through load_state_dict
    assert mine.state_dict()._metadata[""]["spectral_norm"] == ref.state_dict()._metadata[""]["spectral_norm"]
    mine.load_state_dict(mine.state_dict())
    wu.remove_spectral_norm(mine)
    tu.remove_spectral_norm(ref)
    assert list(mine.state_dict()) == list(ref.state_dict())
    compare_state(mine, ref, rtol=1e-4, atol=1e-5)
    assert not mine._state_dict_hooks and len(mine._forward_pre_hooks) == 0


def test_spectral_norm_in_a_model(device):
    # a GAN discriminator's usual form: spectral_norm around each layer of a Sequential
    def build(nn):
        sn = (tu if nn is torch.nn else wu).spectral_norm
        return nn.Sequential(sn(nn.Conv2d(1, 4, 3, 2, 1)), nn.LeakyReLU(0.2), nn.Flatten(), sn(nn.Linear(16, 1)))
    mine, ref = build(torchweb.nn).to(device), build(torch.nn)
    ref.load_state_dict({k: theirs(v) for k, v in mine.state_dict().items()})
    x = make((2, 1, 4, 4))
    assert_close(mine(ours(x, device)), ref(x), rtol=1e-4, atol=1e-5)
    compare_state(mine, ref, rtol=1e-4, atol=1e-5)


def test_spectral_norm_errors():
    for lib, nn in ((tu, torch.nn), (wu, torchweb.nn)):
        m = nn.Linear(2, 2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got n_power_iterations=0"):
            lib.spectral_norm(m, n_power_iterations=0)
        lib.spectral_norm(m)
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
            lib.spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in Linear"):
            lib.remove_spectral_norm(m, "bias")
        m2 = nn.Linear(2, 2, bias=False)
        with pytest.raises(ValueError, match="`SpectralNorm` cannot be applied as parameter `bias` is None"):
            lib.spectral_norm(m2, "bias")
