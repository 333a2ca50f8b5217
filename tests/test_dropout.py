"""Dropout (ops/composite/dropout.py). PyTorch's random numbers can't be matched, so the tests
check what must hold: kept elements scaled by 1 / (1 - p), the dropped fraction near p, feature
forms constant over spatial dims, the identity when not training, the gradient equal to the mask,
seeded reproducibility and the same mask on both devices, the alpha forms' affine map, and
PyTorch's exceptions for bad arguments."""

import warnings

import pytest
import torch

import torchweb
import torchweb.nn.functional as TWF
from oracle import make, ours


def values(t):
    return torch.tensor(t.detach().tolist(), dtype=torch.float32).reshape(tuple(t.shape))


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_values_and_rate(device, p):
    torchweb.manual_seed(7)
    x = make((64, 64), low=1.0, high=2.0)
    y = values(TWF.dropout(ours(x, device), p))
    kept = y != 0
    torch.testing.assert_close(y[kept], x[kept] / (1 - p), rtol=1e-6, atol=1e-6)
    assert abs((~kept).float().mean().item() - p) < 0.03


def test_dropout_same_mask_on_both_devices_and_seeded():
    x = make((5, 7))
    outs = []
    for device in ("cpu", "webgpu", "cpu"):
        torchweb.manual_seed(123)
        outs.append(values(TWF.dropout(ours(x, device), 0.4)))
    torch.testing.assert_close(outs[0], outs[1])
    torch.testing.assert_close(outs[0], outs[2])
    torchweb.manual_seed(124)
    assert not torch.equal(values(TWF.dropout(ours(x, "cpu"), 0.4)), outs[0])


def test_dropout_identity_and_edges(device):
    x = ours(make((3, 4)), device)
    assert TWF.dropout(x, 0.5, training=False) is x
    assert TWF.dropout(x, 0.0) is x
    assert TWF.alpha_dropout(x, 0.5) is x            # training=False by default
    assert TWF.feature_alpha_dropout(x, 0.5) is x
    assert torchweb.dropout(x, 0.3, False) is x
    assert values(TWF.dropout(x, 1.0)).abs().sum() == 0
    e = ours(torch.zeros(0, 3), device)
    assert TWF.dropout(e, 0.5).shape == (0, 3)


def test_dropout_gradient_is_the_mask(device):
    torchweb.manual_seed(3)
    x = ours(make((6, 5), low=1.0, high=2.0), device, requires_grad=True)
    y = TWF.dropout(x, 0.25)
    y.sum().backward()
    mask = (values(y) != 0).float() / 0.75
    torch.testing.assert_close(values(x.grad), mask)


def test_dropout_inplace(device):
    torchweb.manual_seed(5)
    x = ours(make((4, 6), low=1.0, high=2.0), device)
    before = values(x)
    y = TWF.dropout(x, 0.5, inplace=True)
    assert y is x
    got = values(x)
    kept = got != 0
    torch.testing.assert_close(got[kept], before[kept] * 2)


@pytest.mark.parametrize("fn,shape,chan_dims", [
    ("dropout1d", (4, 6, 5), 2), ("dropout1d", (6, 5), 1), ("dropout2d", (3, 5, 4, 4), 2),
    ("dropout2d", (3, 5, 4), 2), ("dropout3d", (2, 4, 3, 2, 2), 2), ("dropout3d", (4, 3, 2, 2), 1)])
def test_feature_dropout_masks_whole_channels(device, fn, shape, chan_dims):
    torchweb.manual_seed(11)
    x = ours(make(shape, low=1.0, high=2.0), device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = values(getattr(TWF, fn)(x, 0.5, True))
    xs = values(x)
    per_channel = y.reshape(tuple(shape[:chan_dims]) + (-1,))
    ratio = per_channel / xs.reshape(per_channel.shape)
    # one value per channel: all the spatial entries of a channel scaled alike
    assert torch.allclose(ratio, ratio[..., :1].expand_as(ratio), atol=1e-5)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_affine_map(device, feature):
    torchweb.manual_seed(9)
    p = 0.3
    x = make((8, 6, 5))
    fn = TWF.feature_alpha_dropout if feature else TWF.alpha_dropout
    y = values(fn(ours(x, device), p, True))
    alpha = 1.7580993408473766
    a = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5
    kept_val = x * a + alpha * a * p
    dropped_val = torch.full_like(x, -alpha * a + alpha * a * p)
    is_kept = torch.isclose(y, kept_val, atol=1e-5)
    is_dropped = torch.isclose(y, dropped_val, atol=1e-5)
    assert (is_kept | is_dropped).all()
    if feature:  # whole channels: dropped everywhere over the last dim or nowhere
        assert (is_dropped.all(-1) | ~is_dropped.any(-1)).all()
    frac = is_dropped.float().mean().item()
    assert abs(frac - p) < 0.15


def test_alpha_dropout_keeps_selu_statistics(device):
    torchweb.manual_seed(1)
    x = ours(torch.randn(20000), device)
    y = values(TWF.alpha_dropout(x, 0.2, True))
    assert abs(y.mean().item()) < 0.05 and abs(y.std().item() - 1) < 0.05


BAD = [
    lambda F: F.dropout(torch_ones(3), 1.5),
    lambda F: F.dropout(torch_ones(3), -0.1),
    lambda F: F.alpha_dropout(torch_ones(3), 2.0),
    lambda F: F.dropout1d(torch_ones(3), 0.5),
    lambda F: F.dropout1d(torch_ones(2, 3, 4, 5), 0.5),
]


def torch_ones(*s):
    return _ONES[0](*s)


_ONES = [None]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_dropout_bad_input(i):
    _ONES[0] = torch.ones
    with pytest.raises(Exception) as theirs:
        BAD[i](torch.nn.functional)
    _ONES[0] = torchweb.ones
    with pytest.raises(type(theirs.value)) as mine:
        BAD[i](TWF)
    assert str(mine.value) == str(theirs.value)


def test_dropout_large(device):
    # 70000 * 4 elements: the mask's kernels cross 65535 workgroups
    torchweb.manual_seed(2)
    y = values(TWF.dropout(torchweb.ones(70000, 4, device=device), 0.5))
    assert set(y.unique().tolist()) == {0.0, 2.0}
    assert abs((y == 0).float().mean().item() - 0.5) < 0.01
