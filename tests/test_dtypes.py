"""dtypes against PyTorch: type promotion between tensors, 0-d tensors and Python scalars;
int64 held in 32 bits on webgpu (out-of-range values refused); float64 held on the host (tests/test_float64_host.py), int8 and int16 refused with TypeError (bfloat16: tests/test_bfloat16.py);
float16 on webgpu stored as f16 where the adapter has 'shader-f16', else in f32 words."""

import pytest
import torch

import torchweb
from oracle import OUR_DTYPE, TORCH_DTYPE, assert_close, check, make, ours

DTYPES = list(TORCH_DTYPE.values())
PAIRS = [(a, b) for a in DTYPES for b in DTYPES]


def ident(d):
    return str(d).replace("torch.", "")


@pytest.mark.parametrize("a,b", PAIRS, ids=lambda d: ident(d))
def test_promote_types_and_result_type(a, b):
    assert torchweb.promote_types(OUR_DTYPE[a], OUR_DTYPE[b]).name == ident(torch.promote_types(a, b))
    x, y = torch.ones(2, dtype=a), torch.ones(2, dtype=b)
    assert torchweb.result_type(ours(x, "cpu"), ours(y, "cpu")).name == ident(torch.result_type(x, y))


@pytest.mark.parametrize("a,b", PAIRS, ids=lambda d: ident(d))
@pytest.mark.parametrize("kinds", [("dim", "dim"), ("dim", "0d"), ("0d", "dim"), ("0d", "0d")], ids=str)
def test_binary_promotion(device, a, b, kinds):
    x = make((3,) if kinds[0] == "dim" else (), a, low=1, high=3)
    y = make((3,) if kinds[1] == "dim" else (), b, low=1, high=3)
    for fn in (lambda m, p, q: p + q, lambda m, p, q: p * q, lambda m, p, q: p / q, lambda m, p, q: p < q,
               lambda m, p, q: m.maximum(p, q), lambda m, p, q: m.where(p > 1, p, q)):
        check(fn, x, y, device=device, rtol=1e-3, atol=1e-3)


SCALARS = [2, -1, 2.5, True, False, 0, 10**6]


@pytest.mark.parametrize("dtype", DTYPES, ids=ident)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("shape", [(3,), ()], ids=str)
def test_scalar_promotion(device, dtype, scalar, shape):
    x = make(shape, dtype, low=1, high=3)
    if dtype is torch.float16 and scalar == 10**6:
        scalar = 1000  # beyond half's range: inf either way, not a promotion question
    for fn in (lambda m, p: p + scalar, lambda m, p: scalar * p, lambda m, p: p == scalar,
               lambda m, p: m.where(p > 1, p, scalar), lambda m, p: m.clamp(p, min=scalar)):
        check(fn, x, device=device, rtol=1e-3, atol=1e-3)
    if dtype is not torch.bool:
        check(lambda m, p: p - scalar, x, device=device, rtol=1e-3, atol=1e-3)


def test_scalar_result_type():
    for d in DTYPES:
        x = torch.ones(2, dtype=d)
        for s in SCALARS:
            assert torchweb.result_type(ours(x, "cpu"), s).name == ident(torch.result_type(x, s))


def test_default_dtype(device):
    assert str(torchweb.get_default_dtype()) == str(torch.get_default_dtype())
    try:
        torchweb.set_default_dtype(torchweb.float16)
        torch.set_default_dtype(torch.float16)
        for data in ([1.5, 2], 3.0):
            assert_close(torchweb.tensor(data, device=device), torch.tensor(data))
        assert_close(ours(torch.tensor([1, 2]), device) / 2, torch.tensor([1, 2]) / 2)
        assert_close(torchweb.arange(0.0, 2.0, 0.5, device=device), torch.arange(0.0, 2.0, 0.5))
    finally:
        torchweb.set_default_dtype(torchweb.float32)
        torch.set_default_dtype(torch.float32)
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int64)
    with pytest.raises(TypeError):
        torchweb.set_default_dtype(torchweb.int64)


def test_dtype_attributes():
    for d in DTYPES:
        o = OUR_DTYPE[d]
        assert repr(o) == repr(d) and str(o) == str(d)
        assert (o.is_floating_point, o.is_signed, o.itemsize) == (d.is_floating_point, d.is_signed, d.itemsize)
        assert ours(torch.ones(2, dtype=d), "cpu").element_size() == torch.ones(2, dtype=d).element_size()
    assert torchweb.float is torchweb.float32 and torchweb.half is torchweb.float16
    assert torchweb.long is torchweb.int64 and torchweb.int is torchweb.int32


# -- int64 in 32 bits on webgpu -------------------------------------------------------------------
BIG = [2**31, -2**31 - 1, 2**40, -(2**62)]


@pytest.mark.parametrize("value", BIG)
def test_int64_out_of_range_refused_on_webgpu(value):
    # PyTorch holds these; torchweb's cpu device (numpy int64) does too
    e = torch.tensor([value, 1])
    assert_close(torchweb.tensor([value, 1], device="cpu"), e)
    with pytest.raises(RuntimeError, match="out of range for torch.int64 on webgpu"):
        torchweb.tensor([value, 1], device="webgpu")
    with pytest.raises(RuntimeError, match="out of range"):
        torchweb.tensor([value, 1], device="cpu").to("webgpu")
    import numpy as np
    with pytest.raises(RuntimeError, match="out of range"):
        torchweb.tensor(np.array([value, 1]), device="webgpu")
    with pytest.raises(RuntimeError, match="out of range for torch.int64 on webgpu"):
        torchweb.full((2,), value, device="webgpu")
    with pytest.raises(RuntimeError, match="out of range for torch.int64 on webgpu"):
        torchweb.zeros(2, dtype=torchweb.int64, device="webgpu").fill_(value)
    with pytest.raises(RuntimeError, match="out of range for torch.int64 on webgpu"):
        torchweb.zeros(2, dtype=torchweb.int64, device="webgpu") + value
    assert_close(torchweb.full((2,), value, device="cpu"), torch.full((2,), value))
    assert_close(torchweb.zeros(2, dtype=torchweb.int64, device="cpu") + value, torch.zeros(2, dtype=torch.int64) + value)
    # and the device still works after the refusal
    assert_close(torchweb.tensor([2**31 - 1, -2**31], device="webgpu"), torch.tensor([2**31 - 1, -2**31]))


def test_int64_edge_values_exact(device):
    e = torch.tensor([2**31 - 1, -2**31, 0, -1, 123456789])
    assert_close(ours(e, device), e)
    assert_close(ours(e, device).sum(), torch.tensor(2**31 - 1 - 2**31 + 123456789 - 1))
    assert_close(ours(e, device).max(), e.max())
    assert_close(ours(e, device).to(torchweb.float32), e.float())


def test_int32_out_of_range_refused(device):
    with pytest.raises(RuntimeError):
        torch.tensor([2**31], dtype=torch.int32)
    with pytest.raises(RuntimeError):
        torchweb.tensor([2**31], dtype=torchweb.int32, device=device)


# -- float64 (held on the host: tests/test_float64_host.py) ----------------------------------------
@pytest.mark.parametrize("make_it", [
    lambda d: torchweb.tensor([1.0], dtype=torchweb.float64, device=d),
    lambda d: torchweb.zeros(1, dtype=torchweb.float64, device=d) + 1,
    lambda d: torchweb.ones(1, dtype=torchweb.double, device=d),
    lambda d: torchweb.arange(1, 2, dtype=torchweb.float64, device=d),
    lambda d: torchweb.tensor([1.0], device=d).to(torchweb.float64),
    lambda d: torchweb.tensor([1.0], device=d).double(),
    lambda d: torchweb.tensor([1.0], device=d).to(dtype=torchweb.float64),
    lambda d: torchweb.full((1,), 1.0, dtype=torchweb.float64, device=d),
], ids=range(8))
def test_float64_is_held_on_the_host(device, make_it):
    t = make_it(device)
    assert t.dtype is torchweb.float64 and t.device.type == "cpu" and t.tolist() == [1.0]
    assert repr(t.dtype) == repr(torch.tensor([1.0], dtype=torch.float64).dtype)


@pytest.mark.parametrize("make_it", [
    lambda d: torchweb.set_default_dtype(torchweb.float64),
    lambda d: torchweb.tensor([1], dtype=torchweb.int8, device=d),
    lambda d: torchweb.tensor([1], dtype=torchweb.int16, device=d),
], ids=range(3))
def test_unsupported_dtypes_refused_with_type_error(device, make_it):
    with pytest.raises(TypeError, match="not supported|float64"):
        make_it(device)
    # PyTorch has these: a refusal of ours, with a clear message, not a PyTorch behaviour
    assert_close(torchweb.tensor([1.5], device=device) * 2, torch.tensor([3.0]))  # still works


def test_float64_results_of_gpu_ops_refused(device):
    # a float64 result of a GPU (or numpy cpu) op would need a float64 kernel: refused
    with pytest.raises(RuntimeError, match=r"float64.*\.float\(\)"):
        torchweb.tensor([1.0], device=device).sum(dtype=torchweb.float64)


# -- float16 --------------------------------------------------------------------------------------
def test_lavapipe_has_shader_f16():
    assert "shader-f16" in torchweb.webgpu.features()


def test_float16_on_webgpu():
    x = make((4, 5), torch.float16, low=-4, high=4)
    y = make((5,), torch.float16, low=-4, high=4)
    o, p = ours(x, "webgpu"), ours(y, "webgpu")
    assert o.dtype is torchweb.float16 and o.element_size() == 2
    assert_close(o + p, x + y, rtol=1e-3, atol=1e-3)
    assert_close(o * p, x * y, rtol=1e-3, atol=1e-3)
    assert_close(o.sum(1), x.float().sum(1).half(), rtol=2e-3, atol=2e-3)  # fp32 accumulation
    assert_close(o.exp(), x.exp(), rtol=1e-3, atol=1e-3)
    assert_close(o.to(torchweb.float32), x.float())
    assert_close(o[:, 1::2].t().contiguous(), x[:, 1::2].t().contiguous())
    assert_close(torchweb.tensor([70000.0, -70000.0, 1e-8, 3.14159], dtype=torchweb.float16, device="webgpu"),
                 torch.tensor([70000.0, -70000.0, 1e-8, 3.14159], dtype=torch.float16))
    assert_close(ours(torch.tensor([1e5]), "webgpu").half(), torch.tensor([1e5]).half())


def test_float16_storage_follows_the_adapter():
    # shader-f16 (lavapipe): stored as f16; without it float16 is held in f32 words, rounded to
    # half at every store (tests/test_float16_emulated.py runs that path)
    assert torchweb.float16.gpu_storage == "f16"
    assert torchweb.float16.itemsize == 2 and torchweb.float16.gpu_compute == "f32"
