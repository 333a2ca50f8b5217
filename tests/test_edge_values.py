"""Edge values the differential fuzz found (tests/fuzz): operands cast to a float16 common dtype
first, subnormal inputs to log and subnormal divisors of fmod/remainder. Compared with PyTorch."""

import pytest
import torch

from oracle import check

HALF_MIXES = {
    "mul": lambda m, a, b: a * b,
    "eq": lambda m, a, b: a == b,
    "lt": lambda m, a, b: a < b,
    "pow": lambda m, a, b: m.pow(a, b),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
}


@pytest.mark.parametrize("name", HALF_MIXES)
@pytest.mark.parametrize("int_dtype", [torch.int32, torch.int64])
def test_ints_round_to_float16_like_pytorch(device, name, int_dtype):
    h = torch.tensor([0.0, float("inf"), -1.0, 2.0, float("-inf"), 1.0], dtype=torch.float16)
    i = torch.tensor([70000, 2**31 - 1, 46341, 2049, -2**31, 65519], dtype=int_dtype)
    check(HALF_MIXES[name], h, i, device=device, rtol=1e-3, atol=1e-3)
    check(HALF_MIXES[name], i.flip(0), h, device=device, rtol=1e-3, atol=1e-3)


def test_zero_dim_operands_stay_in_float(device):
    # PyTorch keeps 0-d operands (CPU scalars) in float: 0 * 1e5 is 0, not 0 * inf
    h = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float16)
    check(lambda m, a, b: (a * b, (a * 0) * b, a * 1e5), h, torch.tensor(1e5), device=device)


def _flushes_subnormals(device):
    """WGSL lets a GPU flush subnormal floats to zero (NVIDIA does; lavapipe doesn't)."""
    import torchweb
    return device == "webgpu" and (torchweb.tensor([1e-40], device=device) * 1.0).item() == 0.0


def test_log_of_subnormals(device):
    if _flushes_subnormals(device):
        pytest.skip("this adapter flushes subnormal floats to zero (WGSL allows it)")
    x = torch.tensor([1e-40, 1e-45, 1.17e-38, 5e-39, 1e-38])
    for fn in (lambda m, t: m.log(t), lambda m, t: m.log2(t), lambda m, t: m.log10(t)):
        check(fn, x, device=device, rtol=2e-6)


def test_fmod_and_remainder_with_subnormal_divisors(device):
    if _flushes_subnormals(device):
        pytest.skip("this adapter flushes subnormal floats to zero (WGSL allows it)")
    # one element at a time: PyTorch's scalar path is exact; its vectorised one gives NaN once
    # a / b overflows float32, which is a documented deviation (docs/testing.md)
    for a, b in [(1.0, 1e-40), (-3.5, 7e-42), (1e30, 1e-44), (2e-40, 3e-41), (-0.0, 1e-40)]:
        for fn in (lambda m, x, y: m.fmod(x, y), lambda m, x, y: m.remainder(x, y)):
            check(fn, torch.tensor([a]), torch.tensor([b]), device=device, rtol=0, atol=0)
