"""Window functions against PyTorch: hann, hamming, blackman, bartlett, kaiser; periodic and
symmetric, their parameters, dtype, device, requires_grad and PyTorch's errors."""

import pytest
import torch

import torchweb
from oracle import assert_close

WINDOWS = {
    "hann_window": {},
    "hamming_window": {"alpha": 0.5, "beta": 0.3},
    "blackman_window": {},
    "bartlett_window": {},
    "kaiser_window": {"beta": 5.0},
}


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("periodic", [True, False])
def test_window_values(device, name, periodic):
    for n in (0, 1, 2, 3, 8, 17, 64):
        got = getattr(torchweb, name)(n, periodic, device=device)
        assert got.device.type == device
        assert_close(got, getattr(torch, name)(n, periodic), atol=2e-6, rtol=1e-5)
        if WINDOWS[name]:
            got = getattr(torchweb, name)(n, periodic=periodic, device=device, **WINDOWS[name])
            assert_close(got, getattr(torch, name)(n, periodic=periodic, **WINDOWS[name]), atol=2e-6, rtol=1e-5)


@pytest.mark.parametrize("name", WINDOWS)
def test_window_defaults_dtype_and_grad(device, name):
    assert_close(getattr(torchweb, name)(10, device=device), getattr(torch, name)(10), atol=2e-6)
    w = getattr(torchweb, name)(5, dtype=torchweb.float32, device=device, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    if name != "kaiser_window":      # PyTorch computes kaiser in float for half; we compare loosely
        half = getattr(torchweb, name)(9, dtype=torchweb.float16, device=device)
        assert_close(half, getattr(torch, name)(9, dtype=torch.float16), atol=2e-3, rtol=2e-3)
    for bad in ((-1,), (4,)):
        kw = {"dtype": torchweb.int64} if bad == (4,) else {}
        with pytest.raises(RuntimeError):
            getattr(torch, name)(*bad, **({"dtype": torch.int64} if kw else {}))
        with pytest.raises(RuntimeError, match=name):
            getattr(torchweb, name)(*bad, device=device, **kw)
    with pytest.raises(TypeError):
        getattr(torch, name)(4.0)
    with pytest.raises(TypeError):
        getattr(torchweb, name)(4.0)
