"""Errors only the GPU can see (backends/webgpu/errors.py): integer division by zero and int64
results past the 32 bits the GPU holds int64 in. Compared with PyTorch: where it raises, we
raise the same type; where its int64 result leaves [-2^31, 2^31 - 1], the webgpu device refuses
with Int64RangeError (documented: WebGPU has no 64-bit integers) and the cpu device matches."""

import asyncio

import pytest
import torch

import torchweb
from oracle import assert_close, check

INT32_RANGE = (-2**31, 2**31 - 1)
DIVIDING = {
    "floor_divide": lambda m, a, b: a // b,
    "remainder": lambda m, a, b: a % b,
    "fmod": lambda m, a, b: m.fmod(a, b),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
}


@pytest.mark.parametrize("name", DIVIDING)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8])
@pytest.mark.parametrize("divisor", ["tensor", "broadcast", "scalar"])
def test_integer_division_by_zero_raises(device, name, dtype, divisor):
    fn = DIVIDING[name]
    a = torch.tensor([[7, 3, 5], [1, 2, 9]], dtype=dtype)
    b = {"tensor": torch.tensor([[1, 0, 2], [3, 1, 1]], dtype=dtype),
         "broadcast": torch.tensor([2, 1, 0], dtype=dtype), "scalar": 0}[divisor]
    check(lambda m, x, y: fn(m, x, y).tolist(), a, b, device=device)


@pytest.mark.parametrize("name", DIVIDING)
def test_nonzero_integer_divisors_still_divide(device, name):
    a = torch.tensor([7, -3, 5, -8, 0], dtype=torch.int64)
    b = torch.tensor([2, 2, -3, -3, 5], dtype=torch.int64)
    check(DIVIDING[name], a, b, device=device)


def _int64_case(device, fn, *args):
    """fn(module, *args) on torch and on torchweb: equal where PyTorch's int64 result fits in
    int32; where it doesn't, webgpu refuses with Int64RangeError and cpu matches."""
    mine = [torchweb.tensor(a.tolist(), dtype=getattr(torchweb, str(a.dtype)[6:]), device=device)
            if isinstance(a, torch.Tensor) else a for a in args]   # before fn may write in place
    expected = fn(torch, *args)
    fits = expected.numel() == 0 or (INT32_RANGE[0] <= expected.min().item() and expected.max().item() <= INT32_RANGE[1])
    if device == "webgpu" and not fits:
        with pytest.raises(torchweb.webgpu.Int64RangeError, match="int64"):
            fn(torchweb, *mine).tolist()
    else:
        assert_close(fn(torchweb, *mine), expected)


BIG = 2**31 - 1
ELEMENTWISE = {
    "add": (lambda m, a: a + a, [[BIG, 1, -5], [2**30, -2**30, 0]]),
    "add-in-range": (lambda m, a: a + (-a), [[BIG, -2**31 + 1, 7]]),
    "add-scalar": (lambda m, a: a + 1, [[BIG], [BIG - 1]]),
    "add-alpha": (lambda m, a: m.add(a, a, alpha=3), [[2**29], [2**30]]),
    "sub": (lambda m, a: a - (-a), [[2**30], [2**29]]),
    "sub-alpha": (lambda m, a: m.sub(a, a, alpha=-2), [[2**30], [7]]),
    "mul": (lambda m, a: a * a, [[46341], [46340], [-46341]]),
    "mul-scalar": (lambda m, a: a * 3, [[2**30], [-2**29]]),
    "neg": (lambda m, a: -a, [[-2**31], [BIG]]),
    "abs": (lambda m, a: a.abs(), [[-2**31], [-5]]),
    "square": (lambda m, a: m.square(a), [[46341], [-7]]),
    "pow": (lambda m, a: a ** 3, [[1291], [1290], [-1291]]),
    "pow-wraps-to-zero": (lambda m, a: a ** 64, [[2], [4]]),   # 2^64 mod 2^64: PyTorch's 0
    "floor_divide": (lambda m, a: a // -1, [[-2**31], [5]]),
    "div-trunc": (lambda m, a: m.div(a, -1, rounding_mode="trunc"), [[-2**31], [5]]),
    "in-place": (lambda m, a: a.mul_(2), [[2**30], [1]]),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_int64_elementwise_past_int32(device, name):
    fn, rows = ELEMENTWISE[name]
    for row in rows:
        _int64_case(device, fn, torch.tensor(row, dtype=torch.int64))


@pytest.mark.parametrize("n", [3, 300, 5000, 200000])
@pytest.mark.parametrize("kind", ["sum", "prod"])
def test_int64_reductions_past_int32(device, n, kind):
    g = torch.Generator().manual_seed(n)
    if kind == "sum":
        big = torch.full((n,), 2**30, dtype=torch.int64)
        # partial sums leave int32 while the total is back in range: exact, no refusal
        back = torch.randint(-2**31 + 1, 2**31 - 1, (n,), generator=g)
        back[-1] = 0
        back[-1] = (-back.sum()).clamp(-2**31 + 1, 2**31 - 1)
        inputs = [big, back, torch.randint(-100, 100, (n,), generator=g)]
    else:
        inputs = [torch.full((n,), 3, dtype=torch.int64), torch.full((n,), 2, dtype=torch.int64),
                  torch.where(torch.arange(n) == n // 2, 0, torch.full((n,), 7)),  # a 0: product 0
                  torch.where(torch.arange(n) < 5, -1, 1)]
    for x in inputs:
        _int64_case(device, lambda m, t: getattr(m, kind)(t), x)
        _int64_case(device, lambda m, t: getattr(m, kind)(t.reshape(1, -1), 1), x)


@pytest.mark.parametrize("src", [torch.int32, torch.uint8, torch.bool])
def test_sums_of_narrow_ints_are_int64(device, src):
    x = torch.ones((3, 1000), dtype=src) if src is not torch.int32 else torch.full((3, 1000), 2**22, dtype=src)
    _int64_case(device, lambda m, t: t.sum(1), x)
    _int64_case(device, lambda m, t: t.sum(), x)


def test_float_to_int64_past_int32(device):
    for row in ([2.0**31, 1.0], [-2.0**31, 2.0**31 - 128], [1e10, -3.5], [-1e10]):
        _int64_case(device, lambda m, t: t.to(m.int64), torch.tensor(row))


def test_error_names_the_op_and_leaves_the_device_usable():
    a = torchweb.tensor([4, 6, 8], device="webgpu")
    kept = a * 2
    bad = a // torchweb.tensor([2, 0, 1], device="webgpu")
    with pytest.raises(RuntimeError, match="ZeroDivisionError.*floor_divide"):
        bad.tolist()
    assert kept.tolist() == [8, 12, 16]
    assert (a + 1).tolist() == [5, 7, 9]
    over = a * (2**30)
    with pytest.raises(torchweb.webgpu.Int64RangeError, match="mul"):
        torchweb.webgpu.synchronize()
    torchweb.webgpu.synchronize()   # reported once
    assert a.sum().item() == 18
    del over


def test_first_failing_op_is_reported():
    a = torchweb.tensor([1, 2], device="webgpu")
    first = a % torchweb.tensor([0, 1], device="webgpu")
    second = a * (2**31 - 1)
    with pytest.raises(RuntimeError, match="ZeroDivisionError.*remainder"):
        second.tolist()
    del first


def test_awaited_readback_raises_too():
    a = torchweb.tensor([1, 2], device="webgpu")
    b = a.fmod(torchweb.tensor([1, 0], device="webgpu"))
    with pytest.raises(RuntimeError, match="ZeroDivisionError.*fmod"):
        asyncio.run(b.tolist_async())
    assert asyncio.run(a.tolist_async()) == [1, 2]


def test_float_work_reads_no_error_flags():
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    rt.synchronize()
    x = torchweb.ones(10, device="webgpu")
    y = (x * 2).sum() // 3
    assert not rt.errors.pending()
    assert y.item() == 6.0


@pytest.mark.parametrize("shape", [((3, 4), (4, 5)), ((40, 70), (70, 33)), ((2, 3, 20), (20, 17))])
def test_int64_matmul_past_int32(device, shape):
    sa, sb = shape
    g = torch.Generator().manual_seed(7)
    small = (torch.randint(-50, 50, sa, generator=g), torch.randint(-50, 50, sb, generator=g))
    big = (torch.randint(2**15, 2**16, sa, generator=g), torch.randint(2**15, 2**16, sb, generator=g))
    for a, b in (small, big):
        _int64_case(device, lambda m, x, y: x @ y, a, b)
    a32 = big[0].to(torch.int32)   # int32 wraps, in PyTorch too
    check(lambda m, x, y: x @ y, a32, big[1].to(torch.int32), device=device)
