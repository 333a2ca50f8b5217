"""scalar_tensor, range (deprecated), broadcast_shapes, frombuffer, asarray, empty_strided and
empty_permuted against PyTorch."""

import array
import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, ours


def test_scalar_tensor(device):
    for v, kw in ((3, {}), (True, {}), (2.5, {}), (7, {"dtype": "int64"}), (-1, {"dtype": "int32"})):
        tkw = {k: getattr(torch, x) for k, x in kw.items()}
        wkw = {k: getattr(torchweb, x) for k, x in kw.items()}
        got = torchweb.scalar_tensor(v, device=device, **wkw)
        assert got.device.type == device
        assert_close(got, torch.scalar_tensor(v, **tkw))
    assert torchweb.scalar_tensor(1.0, requires_grad=True).requires_grad


@pytest.mark.parametrize("args", [(1, 4), (0, 1, 0.25), (3, 1, -1), (1.5, 3.2, 0.5), (0, 0), (2, 8, 3)])
def test_range(device, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.range(*args)
    with pytest.warns(UserWarning, match="deprecated"):
        got = torchweb.range(*args, device=device)
    assert_close(got, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(torchweb.range(*args, dtype=torchweb.int64), torch.range(*args, dtype=torch.int64)) \
            if all(isinstance(a, int) for a in args) else None


def test_range_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in ((1, 3, -1), (1, 3, 0), (4,)):
            with pytest.raises((RuntimeError, TypeError)) as e:
                torch.range(*args)
            with pytest.raises(e.type):
                torchweb.range(*args)


@pytest.mark.parametrize("shapes", [((2, 1), (3,), [1, 1]), ((2, 1), (3, 2)), (3, (2, 1)), (), ((0, 1), (1, 4)),
                                    (torch.Size([5, 1]),), ((2, -1),)])
def test_broadcast_shapes(shapes):
    try:
        expected = torch.broadcast_shapes(*shapes)
    except (RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):
            torchweb.broadcast_shapes(*[tuple(s) if isinstance(s, torch.Size) else s for s in shapes])
        return
    got = torchweb.broadcast_shapes(*[tuple(s) if isinstance(s, torch.Size) else s for s in shapes])
    assert isinstance(got, torchweb.Size) and tuple(got) == tuple(expected)


def test_frombuffer(device):
    buf = array.array("f", [1.5, -2.0, 3.25, 4.0])
    cases = [dict(dtype="float32"), dict(dtype="float32", count=2, offset=4), dict(dtype="uint8", offset=3),
             dict(dtype="int32", count=1, offset=8), dict(dtype="uint8"),
             dict(dtype="float32", count=5), dict(dtype="float32", offset=2), dict(dtype="float32", offset=16),
             dict(dtype="float32", count=0)]
    for kw in cases:
        tkw = {**kw, "dtype": getattr(torch, kw["dtype"])}
        wkw = {**kw, "dtype": getattr(torchweb, kw["dtype"])}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # PyTorch warns that array.array is not writable... (it is)
            try:
                expected = torch.frombuffer(bytearray(buf.tobytes()), **tkw).clone()
            except ValueError:
                with pytest.raises(ValueError):
                    torchweb.frombuffer(bytearray(buf.tobytes()), **wkw)
                continue
        assert_close(torchweb.frombuffer(bytearray(buf.tobytes()), **wkw), expected)
    assert_close(torchweb.frombuffer(b"\x01\x00\x02\x00\x00\x00\x00\x00", dtype=torchweb.int64)[:1],
                 torch.tensor([131073]))


def test_asarray(device):
    x = ours(torch.arange(4.0), device)
    assert torchweb.asarray(x) is x
    c = torchweb.asarray(x, copy=True)
    assert c is not x
    assert_close(c, torch.arange(4.0))
    assert_close(torchweb.asarray(x, dtype=torchweb.int64), torch.asarray(torch.arange(4.0), dtype=torch.int64))
    with pytest.raises(ValueError):
        torchweb.asarray(x, dtype=torchweb.int64, copy=False)
    assert_close(torchweb.asarray([[1, 2], [3, 4]], device=device), torch.asarray([[1, 2], [3, 4]]))
    assert_close(torchweb.asarray(2.5), torch.asarray(2.5))
    assert torchweb.asarray([1.0], requires_grad=True).requires_grad


def test_empty_strided_and_permuted(device):
    t = torchweb.empty_strided((2, 3), (1, 2), device=device)
    assert tuple(t.shape) == (2, 3) and t.stride() == (1, 2) and t.device.type == device
    t.copy_(ours(torch.arange(6.0).reshape(2, 3), device))
    assert_close(t, torch.arange(6.0).reshape(2, 3))
    assert torchweb.empty_strided((0, 3), (3, 1)).numel() == 0
    p = torchweb.empty_permuted((2, 3, 4), (0, 2, 1), device=device)
    e = torch.empty_permuted((2, 3, 4), (0, 2, 1))
    assert tuple(p.shape) == tuple(e.shape) and p.stride() == e.stride()
    with pytest.raises(RuntimeError):
        torch.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError):
        torchweb.empty_permuted((2, 3), (0, 0))
