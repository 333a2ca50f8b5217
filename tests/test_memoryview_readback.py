"""Readback into a buffer without a Python number per element (issue 9, target (c)):
torchweb.webgpu.to_memoryview / to_memoryview_async, and memoryview(t) on Python 3.12+.
Values, shape and format are compared with PyTorch's tensor for every dtype, views, pending
fused results, 0-d and empty tensors, on both devices."""

import asyncio
import struct
import sys

import pytest
import torch

import torchweb
from conftest import DEVICES

# float16 comes as 'f' (widened) before Python 3.12, whose memoryview lacks the 'e' format
FORMATS = {"float32": "f", "float16": "e" if sys.version_info >= (3, 12) else "f", "int32": "i", "int64": "q", "uint8": "B", "bool": "?"}


def _values(t):
    ref = torch.tensor(t) if not isinstance(t, torch.Tensor) else t
    return ref.tolist()


def _check(mv, ref):
    assert mv.format == FORMATS[str(ref.dtype).removeprefix("torch.")]
    if ref.numel() == 0:
        assert mv.tolist() == []
        return
    assert mv.shape == tuple(ref.shape)
    got = mv.tolist()
    assert got == ref.tolist()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", list(FORMATS))
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0,), (2, 0)])
def test_to_memoryview_matches_torch(device, dtype, shape):
    g = torch.Generator().manual_seed(7)
    ref = (torch.randn(shape, generator=g) * 300).to(getattr(torch, dtype))
    t = torchweb.tensor(ref.tolist(), dtype=getattr(torchweb, dtype), device=device)
    _check(torchweb.webgpu.to_memoryview(t), ref)
    _check(asyncio.run(torchweb.webgpu.to_memoryview_async(t)), ref)


@pytest.mark.parametrize("device", DEVICES)
def test_views_and_pending_results(device):
    ref = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    t = torchweb.arange(24, dtype=torchweb.float32, device=device).reshape(4, 6)
    _check(torchweb.webgpu.to_memoryview(t.t()[1:, ::2]), ref.t()[1:, ::2])
    # a chain of elementwise ops is a pending fused expression until read
    _check(torchweb.webgpu.to_memoryview((t * 2 - 9).neg().abs().add(1)), (ref * 2 - 9).neg().abs().add(1))
    # requires_grad is fine: the values are a copy, outside autograd
    w = torchweb.ones(3, requires_grad=True, device=device)
    _check(torchweb.webgpu.to_memoryview(w * 3), torch.ones(3) * 3)


def test_a_million_floats_round_trip():
    n = 1 << 20
    t = torchweb.arange(n, dtype=torchweb.float32, device="webgpu") * 0.5
    mv = torchweb.webgpu.to_memoryview(t)
    assert mv.shape == (n,) and mv.format == "f"
    assert mv[n - 1] == (n - 1) * 0.5 and mv[12345] == 12345 * 0.5
    assert bytes(mv[:2].cast("B")) == struct.pack("<2f", 0.0, 0.5)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="memoryview(obj) needs PEP 688 (Python 3.12+)")
def test_memoryview_of_a_tensor():
    t = torchweb.tensor([[1.5, 2.0], [3.0, -4.0]], device="webgpu")
    assert memoryview(t).tolist() == [[1.5, 2.0], [3.0, -4.0]]
