"""F.max_pool*d_with_indices / F.adaptive_max_pool*d_with_indices (always (values, indices)),
F.fractional_max_pool2d/3d(_with_indices) and nn.FractionalMaxPool2d/3d against PyTorch: the
regions are random, so both sides get the same `_random_samples`; values, indices, gradients,
output_ratio, unbatched input, errors by type and message."""

import pytest
import torch
import torch.nn.functional as TF

import torchweb
from oracle import assert_close, make, ours

WF = torchweb.nn.functional


@pytest.mark.parametrize("r,shape,kw", [
    (1, (2, 3, 9), {"kernel_size": 3, "stride": 2}),
    (2, (2, 3, 7, 8), {"kernel_size": 2, "padding": 1, "ceil_mode": True}),
    (2, (3, 6, 6), {"kernel_size": (2, 3), "dilation": 2, "return_indices": False}),
    (3, (1, 2, 5, 6, 4), {"kernel_size": 2}),
])
def test_max_pool_with_indices(device, r, shape, kw):
    name = f"max_pool{r}d_with_indices"
    x = make(shape)
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e = getattr(TF, name)(tx, **kw)
    g = getattr(WF, name)(wx, **kw)
    assert isinstance(g, tuple) and len(g) == 2
    assert_close(g, e)
    up = make(tuple(e[0].shape))
    e[0].backward(up)
    g[0].backward(ours(up, device))
    assert_close(wx.grad, tx.grad)


@pytest.mark.parametrize("r,shape,size", [(1, (2, 3, 9), 4), (2, (2, 3, 7, 8), (3, None)), (2, (3, 5, 5), 2),
                                          (3, (1, 2, 5, 6, 4), (2, 3, 2))])
def test_adaptive_max_pool_with_indices(device, r, shape, size):
    name = f"adaptive_max_pool{r}d_with_indices"
    x = make(shape)
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e = getattr(TF, name)(tx, size)
    g = getattr(WF, name)(wx, size)
    assert_close(g, e)
    e[0].sum().backward()
    g[0].sum().backward()
    assert_close(wx.grad, tx.grad)


FRACTIONAL = [
    (2, (2, 3, 8, 9), 3, {"output_size": (4, 5)}),
    (2, (3, 7, 10), (2, 3), {"output_size": (5, 4)}),
    (2, (2, 3, 8, 9), 2, {"output_size": (7, 8)}),        # windows overlap
    (2, (2, 3, 8, 9), 2, {"output_size": 1}),
    (2, (2, 2, 10, 11), 2, {"output_ratio": (0.5, 0.7)}),
    (2, (2, 2, 10, 11), 3, {"output_ratio": (0.4, 0.6)}),
    (3, (2, 2, 6, 7, 8), 2, {"output_size": (3, 4, 5)}),
    (3, (2, 6, 7, 8), (2, 3, 2), {"output_size": 3}),
    (3, (1, 2, 8, 8, 8), 2, {"output_ratio": 0.5}),
]


@pytest.mark.parametrize("r,shape,k,kw", FRACTIONAL)
def test_fractional_max_pool(device, r, shape, k, kw):
    n = 1 if len(shape) == r + 1 else shape[0]
    u = torch.rand(n, shape[-r - 1], r, generator=torch.Generator().manual_seed(sum(shape)))
    x = make(shape)
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e = getattr(TF, f"fractional_max_pool{r}d")(tx, k, return_indices=True, _random_samples=u, **kw)
    g = getattr(WF, f"fractional_max_pool{r}d")(wx, k, return_indices=True, _random_samples=ours(u, device), **kw)
    assert_close(g, e, rtol=0, atol=0)
    up = make(tuple(e[0].shape))
    e[0].backward(up)
    g[0].backward(ours(up, device))
    assert_close(wx.grad, tx.grad)
    # the _with_indices form, and values only without return_indices
    e2 = getattr(TF, f"fractional_max_pool{r}d_with_indices")(x, k, _random_samples=u, **kw)
    g2 = getattr(WF, f"fractional_max_pool{r}d_with_indices")(ours(x, device), k, _random_samples=ours(u, device),
                                                              **kw)
    assert_close(g2, e2, rtol=0, atol=0)
    g3 = getattr(WF, f"fractional_max_pool{r}d")(ours(x, device), k, _random_samples=ours(u, device), **kw)
    assert_close(g3, e[0].detach(), rtol=0, atol=0)


def test_fractional_random_samples_drawn(device):
    torchweb.manual_seed(0)
    x = ours(make((2, 3, 9, 9)), device)
    a, ia = WF.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    b, ib = WF.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    assert tuple(a.shape) == (2, 3, 4, 4) and ia.dtype == torchweb.int64
    # every value is the input at its index, and is the max of some 2x2 window
    flat = x.reshape(2, 3, 81)
    assert torch.equal(torch.tensor(flat.gather(2, ia.reshape(2, 3, 16)).tolist()), torch.tensor(a.reshape(2, 3, 16).tolist()))
    assert a.tolist() != b.tolist() or ia.tolist() != ib.tolist()   # two draws of the regions


@pytest.mark.parametrize("r,shape,args,kw", [
    (2, (2, 3, 8, 9), (3,), {}),
    (2, (2, 3, 8, 9), (3,), {"output_size": (7, 8)}),
    (2, (2, 3, 8, 9), (3,), {"output_size": (2, 2, 2)}),
    (2, (2, 3, 8, 9), ((3, 3, 3),), {"output_size": (2, 2)}),
    (2, (2, 3, 8, 9), (3,), {"output_ratio": (0.5, 0.5, 0.5)}),
    (2, (8, 9), (3,), {"output_size": 2}),
    (2, (2, 3, 8, 9), (3,), {"output_size": 2, "_random_samples": torch.rand(2, 3, 3)}),
    (2, (2, 3, 8, 9), (3,), {"output_size": 2, "_random_samples": torch.rand(1, 3, 2)}),
    (3, (2, 3, 3, 8, 9), (3,), {"output_size": 2}),
    (3, (3, 8, 9), (3,), {"output_size": 2}),
])
def test_fractional_errors(device, r, shape, args, kw):
    x = make(shape)
    fn = f"fractional_max_pool{r}d"
    with pytest.raises(Exception) as info:
        getattr(TF, fn)(x, *args, **kw)
    wkw = {k: ours(v, device) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    with pytest.raises(info.type) as mine:
        getattr(WF, fn)(ours(x, device), *args, **wkw)
    assert str(mine.value) == str(info.value)


def test_fractional_int_input_refused(device):
    with pytest.raises(NotImplementedError):
        WF.fractional_max_pool2d(torchweb.zeros((1, 1, 4, 4), dtype=torchweb.int64, device=device), 2,
                                 output_size=2, _random_samples=torchweb.rand(1, 1, 2, device=device))


@pytest.mark.parametrize("r,args,kw", [(2, (3,), {"output_size": 4}), (2, ((2, 3),), {"output_ratio": 0.5}),
                                       (3, (2,), {"output_size": (2, 3, 2), "return_indices": True})])
def test_fractional_modules(device, r, args, kw):
    shape = (2, 3, 8, 9) if r == 2 else (2, 2, 6, 7, 8)
    u = torch.rand(2, shape[1], r)
    ref = getattr(torch.nn, f"FractionalMaxPool{r}d")(*args, _random_samples=u, **kw)
    mine = getattr(torchweb.nn, f"FractionalMaxPool{r}d")(*args, _random_samples=ours(u, device), **kw)
    assert repr(mine) == repr(ref)
    for a in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(mine, a) == getattr(ref, a), a
    assert list(mine.state_dict()) == list(ref.state_dict()) == ["_random_samples"]
    x = make(shape)
    assert_close(mine(ours(x, device)), ref(x), rtol=0, atol=0)


@pytest.mark.parametrize("r,args,kw", [(2, (3,), {}), (2, (3,), {"output_ratio": 1.5}),
                                       (2, (3,), {"output_ratio": 0.5, "output_size": 3}),
                                       (3, (0,), {"output_size": 2}), (3, ((2, 0, 2),), {"output_size": 2})])
def test_fractional_module_errors(r, args, kw):
    name = f"FractionalMaxPool{r}d"
    with pytest.raises(ValueError) as info:
        getattr(torch.nn, name)(*args, **kw)
    with pytest.raises(ValueError) as mine:
        getattr(torchweb.nn, name)(*args, **kw)
    assert str(mine.value) == str(info.value)


def test_torch_max_pool1d_with_indices(device):
    x = make((2, 3, 9))
    e = torch.max_pool1d_with_indices(x, 3, 2, 1)
    g = torchweb.max_pool1d_with_indices(ours(x, device), 3, 2, 1)
    assert_close(g, e)
    with pytest.raises(TypeError):
        torchweb.max_pool1d_with_indices(ours(x, device), 3, return_indices=True)


def test_refused_names():
    # fp8 matmuls and DataPipes: hasattr is False, and asking says why
    for ns, name in ((torchweb.nn.functional, "scaled_mm"), (torchweb.nn.functional, "ScalingType"),
                     (torchweb.utils.data, "IterDataPipe"), (torchweb.utils.data, "functional_datapipe")):
        assert not hasattr(ns, name)
        with pytest.raises(AttributeError, match="torchweb"):
            getattr(ns, name)


@pytest.mark.parametrize("name", ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
                                  "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
                                  "adaptive_max_pool3d_with_indices", "fractional_max_pool2d",
                                  "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
                                  "fractional_max_pool3d_with_indices"])
def test_signatures(name):
    # PyTorch's parameter names (its fractional_max_pool*d are boolean_dispatch wrappers: compare
    # the _with_indices form's)
    import inspect
    ref = getattr(TF, name if "with_indices" in name or "fractional" not in name else name + "_with_indices")
    assert list(inspect.signature(getattr(WF, name)).parameters) == list(inspect.signature(ref).parameters)


@pytest.mark.parametrize("name", ["FractionalMaxPool2d", "FractionalMaxPool3d"])
def test_module_signatures(name):
    import inspect
    ours_init = getattr(torchweb.nn, name).__init__
    assert list(inspect.signature(ours_init).parameters) == list(inspect.signature(getattr(torch.nn, name).__init__).parameters)
