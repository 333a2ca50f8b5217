"""sin and cos over the whole float32 range, against PyTorch's float32 results (CPU: correctly
range-reduced). Large arguments need an exact reduction modulo pi/2 (Payne-Hanek on webgpu,
numpy on cpu); arguments closest to multiples of pi/2 have tiny results, so the tolerance is
relative, with no absolute slack beyond the subnormal range."""

import math

import mpmath
import numpy as np
import pytest
import torch

from oracle import check

# Measured: at most 2.4 ulp from the exact result on lavapipe, 1.5 on an NVIDIA H100 (1.7e-7
# relative to torch's float32 result); torch itself is within 0.6 ulp. Subnormal results may be
# flushed to 0 on GPUs, hence the tiny atol.
TOL = {"rtol": 6e-7, "atol": 1e-37}
FUNCS = {"sin": lambda m, x: m.sin(x), "cos": lambda m, x: m.cos(x)}


def with_neighbours(xs):
    x = torch.tensor(xs, dtype=torch.float32)
    inf = torch.full_like(x, math.inf)
    x = torch.cat([x, torch.nextafter(x, inf), torch.nextafter(x, -inf)])
    return torch.cat([x, -x])


def powers_of_two():
    return with_neighbours([2.0 ** e for e in range(-20, 128)])


def random_bits(n=12000):
    g = torch.Generator().manual_seed(2024)
    bits = torch.randint(-2**31, 2**31, (n,), generator=g, dtype=torch.int64)
    bits = bits[(bits & 0x7F800000) != 0x7F800000]  # finite only
    return bits.to(torch.int32).view(torch.float32)


def near_multiples_of_half_pi(n=1500):
    """k*pi/2 rounded to float32 for k from 1 to 1e38 (log-spaced), with their neighbours."""
    mpmath.mp.prec = 300
    ks = sorted({int(10.0 ** (38.0 * i / n)) for i in range(n)} | set(range(1, 200)))
    xs = [float(np.float32(float(mpmath.mpf(k) * mpmath.pi / 2))) for k in ks]
    return with_neighbours([x for x in xs if math.isfinite(x)])


# The float32s closest to a multiple of pi/2 (within 1.6e-9 to 1.2e-8), and those closest
# relatively (x ~ 1e38 within 2e-8), from an exhaustive search over all float32 mantissas
WORST = [7.729178919452902e+28, 21999384576.0, 1.5458357838905804e+29, 43998769152.0,
         252.89820861816406, 3.0916715677811608e+29, 4.638183382783466e+25, 1522788990976.0,
         8.11762663906456e+22, 87997538304.0, 505.7964172363281, 4.3865578967101227e+33,
         42781604.0, 4.71238899230957, 1.0341291951386403e+27, 2.5229175724488532e+38,
         1.2614587862244266e+38, 1.2770834418746477e+38, 2.491668261148411e+38]
SPECIAL = [1e30, -1e30, 5e8, -5e8, 3.4e38, -3.4e38, 1.5707964, 3.1415927, 0.78539816, 8192.0,
           8193.0, 1e-30, 0.0, -0.0, math.nan, math.inf, -math.inf]

INPUTS = {
    "pow2": powers_of_two,
    "random_bits": random_bits,
    "near_half_pi": near_multiples_of_half_pi,
    "worst": lambda: with_neighbours(WORST),
    "special": lambda: torch.tensor(SPECIAL, dtype=torch.float32),
}


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("name", FUNCS)
def test_sin_cos_whole_range(device, name, inputs):
    check(FUNCS[name], INPUTS[inputs](), device=device, **TOL)


@pytest.mark.parametrize("name", FUNCS)
def test_sin_cos_grad_large_arguments(device, name):
    def grad(m, x):
        x = x.detach().requires_grad_(True)
        (FUNCS[name](m, x) * 3.0).sum().backward()
        return x.grad

    x = torch.tensor([1e30, -5e8, 3.4e38, 21999384576.0, 1.5707964, -252.89820861816406, 0.25])
    check(grad, x, device=device, **TOL)
