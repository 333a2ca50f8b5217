"""repr(tensor) equals PyTorch's, character for character.

Our default device is webgpu, so webgpu tensors print without device=, exactly as PyTorch's
cpu tensors do. Our cpu tensors add device='cpu': that suffix is removed before comparing (and,
as it may push later suffixes onto a new line, suffix line breaks are compared loosely there).
"""

import math
import re

import pytest
import torch

import torchweb
from oracle import ours, strip_cpu

NAN, INF = float("nan"), float("inf")

CASES = {
    "floats": torch.tensor([1.0, 2.5, -3.25]),
    "tenths": torch.tensor([0.1, 0.2, 0.3]),
    "int_valued": torch.tensor([1.0, 2.0, -3.0]),
    "int_valued_big": torch.tensor([1.0, 2000.0, -3.0]),
    "int_valued_huge": torch.tensor([1e9, 1.0]),
    "small": torch.tensor([1e-5, 1.0]),
    "tiny_only": torch.tensor([1e-8, 2e-8]),
    "large": torch.tensor([1e10, 1.0, -5.5]),
    "ratio_1000": torch.tensor([0.001, 1.5]),
    "boundary_1e-4": torch.tensor([1e-4, 0.5]),
    "nonfinite": torch.tensor([NAN, INF, -INF, 1.5]),
    "nonfinite_int_mode": torch.tensor([NAN, 1.0, -2.0]),
    "all_nan": torch.tensor([NAN, NAN]),
    "all_inf": torch.tensor([INF, -INF]),
    "zeros": torch.zeros(3),
    "neg_zero": torch.tensor([-0.0, 1.0]),
    "neg_zero_frac": torch.tensor([-0.0, 1.5]),
    "ints": torch.tensor([1, -200, 30]),
    "int32": torch.tensor([1, -2, 3], dtype=torch.int32),
    "uint8": torch.tensor([0, 255, 7], dtype=torch.uint8),
    "bool": torch.tensor([True, False, True]),
    "f16": torch.tensor([1.5, -2.25, 1000.0], dtype=torch.float16),
    "f16_sci": torch.tensor([1e-4, 60000.0], dtype=torch.float16),
    "f16_int": torch.tensor([1.0, 2.0], dtype=torch.float16),
    "matrix": torch.arange(12.0).reshape(3, 4) / 7,
    "matrix_int": torch.arange(-6, 6).reshape(3, 4) * 1000,
    "cube": torch.arange(24.0).reshape(2, 3, 4) - 12,
    "rank5": torch.arange(32).reshape(2, 2, 2, 2, 2),
    "wide_wrap": torch.linspace(-1, 1, 30),
    "wide_matrix_wrap": torch.linspace(-100, 100, 60).reshape(3, 20),
    "wide_int_wrap": torch.arange(40) * 12345,
    "wide_bool_wrap": torch.arange(40) % 3 == 0,
    "scalar_float": torch.tensor(3.5),
    "scalar_int": torch.tensor(-3),
    "scalar_bool": torch.tensor(True),
    "scalar_tiny": torch.tensor(1e-8),
    "scalar_nan": torch.tensor(NAN),
    "scalar_f16": torch.tensor(2.5, dtype=torch.float16),
    "scalar_uint8": torch.tensor(5, dtype=torch.uint8),
    "empty": torch.tensor([]),
    "empty_2d": torch.zeros(0, 3),
    "empty_3d": torch.zeros(2, 0, 1),
    "empty_int": torch.zeros(0, dtype=torch.int64),
    "empty_int_2d": torch.zeros(3, 0, dtype=torch.int64),
    "empty_bool": torch.zeros(0, dtype=torch.bool),
    "empty_f16": torch.zeros(0, dtype=torch.float16),
    "big_1d": torch.arange(2000.0),
    "big_1d_int": torch.arange(5000),
    "big_2d": torch.arange(10000.0).reshape(100, 100) / 3,
    "big_3d": torch.arange(3000).reshape(10, 10, 30),
    "big_bool": torch.arange(2000) % 2 == 0,
    "big_f16": (torch.arange(1500.0) / 10).half(),
    "big_sci": torch.arange(1, 1201, dtype=torch.float32) ** 3,
    "just_under_threshold": torch.arange(1000.0),
    "just_over_threshold": torch.arange(1001.0),
    "big_nonfinite": torch.cat([torch.tensor([NAN, INF]), torch.arange(1200.0) / 8, torch.tensor([-INF])]),
}


def _ours(t, device):
    return ours(t, device)


def _compare(got, expected, device):
    if device == "cpu":
        assert "device='cpu'" in got
        fold = lambda s: re.sub(r",\n\s+(\w+=)", r", \1", s)  # noqa: E731
        got, expected = fold(strip_cpu(got)), fold(expected)
    assert got == expected, f"\nours:\n{got}\ntorch:\n{expected}"


@pytest.mark.parametrize("name", CASES)
def test_repr(device, name):
    t = CASES[name]
    _compare(repr(_ours(t, device)), repr(t), device)
    _compare(str(_ours(t, device)), str(t), device)


@pytest.mark.parametrize("name", ["floats", "matrix", "small", "large", "ints", "nonfinite", "big_2d", "f16",
                                  "int_valued", "scalar_float"])
@pytest.mark.parametrize("opts", [{"sci_mode": True}, {"sci_mode": False}, {"precision": 2},
                                  {"precision": 8}, {"linewidth": 40}, {"threshold": 10, "edgeitems": 2},
                                  {"edgeitems": 1, "threshold": 5}], ids=str)
def test_repr_with_printoptions(device, name, opts):
    t = CASES[name]
    try:
        torch.set_printoptions(**opts)
        torchweb.set_printoptions(**opts)
        _compare(repr(_ours(t, device)), repr(t), device)
    finally:
        torch.set_printoptions(profile="default")
        torchweb.set_printoptions(profile="default")


def test_repr_of_views(device):
    base = torch.arange(30.0).reshape(5, 6) / 4
    o = _ours(base, device)
    for fn in (lambda x: x.t(), lambda x: x[1:, ::2], lambda x: x[2], lambda x: x[:, 0].unsqueeze(1),
               lambda x: x.expand(2, 5, 6)):
        _compare(repr(fn(o)), repr(fn(base)), device)


def test_repr_requires_grad(device):
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    _compare(repr(_ours(t, device).requires_grad_()), repr(t), device)
    t = torch.zeros(2, 3, requires_grad=True)
    _compare(repr(torchweb.zeros(2, 3, device=device, requires_grad=True)), repr(t), device)


def test_repr_long_suffix_wraps(device):
    t = torch.linspace(0, 1, 13, dtype=torch.float16)  # long last line + dtype suffix: wraps
    _compare(repr(_ours(t, device)), repr(t), device)


def test_print_large_reads_little(device):
    # printing a big tensor shows PyTorch's summary (and reads back only the corners)
    t = torch.arange(200000.0).reshape(400, 500)
    _compare(repr(torchweb.arange(200000.0, device=device).reshape(400, 500)), repr(t), device)
