"""The WebGPU backend's host conversions (backends/webgpu/host.py), which every .tolist() and
.item() of a GPU tensor goes through: values packed into each dtype's GPU storage format and
read back with unpack equal what PyTorch's tensor of that dtype holds (its rounding, its
specials), read in place from a memoryview at an offset as read_values hands them over; float16
both as f16 (shader-f16) and as f32 words (no shader-f16)."""

import array
import copy
import math

import pytest
import torch

import torchweb
from oracle import TORCH_DTYPE
from torchweb.backends.webgpu import host

FLOATS = [0.0, -0.0, 1.0, -2.5, 0.1, 3.14159, 1e-3, 65504.0, -65504.0, 1e30, 7e-8, math.inf, -math.inf, math.nan]
F16 = [v for v in FLOATS if abs(v) != 1e30]   # (past float16's range: refused on upload)
INTS = [0, 1, -1, 7, 255, 2**31 - 1, -2**31, 123456]


def _f16_in_f32_words():
    d = copy.copy(torchweb.float16)
    d.gpu_storage = "f32"
    return d


CASES = [(torchweb.float32, FLOATS), (torchweb.bfloat16, FLOATS), (torchweb.float16, F16),
         (_f16_in_f32_words(), F16), (torchweb.int32, INTS), (torchweb.int64, INTS),
         (torchweb.uint8, [0, 1, 7, 200, 255]), (torchweb.bool, [True, False, True, True])]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w), (g, w)
        assert (math.isnan(g) and math.isnan(w)) if isinstance(w, float) and math.isnan(w) else \
            (g == w and math.copysign(1, g) == math.copysign(1, w) if isinstance(w, float) else g == w), (got, want)


@pytest.mark.parametrize("dtype,values", CASES, ids=lambda c: getattr(c, "name", None) or "")
def test_unpack_is_pytorchs_values(dtype, values):
    want = torch.tensor(values, dtype=TORCH_DTYPE[dtype.name]).tolist()
    data = host.pack(values, dtype)
    _same(host.unpack(data, dtype, len(values)), want)
    # as read_values hands them over: a memoryview starting `skip` bytes into a longer read
    skip = 4
    padded = bytearray(skip) + bytearray(data) + bytearray(8)
    _same(host.unpack(memoryview(padded)[skip:], dtype, len(values)), want)


def test_unpack_bool_words_other_than_one_are_true():
    # a bool's GPU word is nonzero for True, as PyTorch's bool of a nonzero number
    words = [0, 1, 2, 0xFFFFFFFF, 256]
    want = torch.tensor(words[:4] + [256], dtype=torch.int64).bool().tolist()
    _same(host.unpack(array.array("I", words).tobytes(), torchweb.bool, len(words)), want)


def test_tolist_of_a_1d_tensor_is_a_new_list_each_time(device):
    t = torchweb.tensor([1.5, -2.0, 3.25], device=device)
    a, b = t.tolist(), t.tolist()
    assert a == b == torch.tensor([1.5, -2.0, 3.25]).tolist() and a is not b
    a[0] = 99.0
    assert t.tolist() == [1.5, -2.0, 3.25]
    assert torchweb.arange(6, device=device).reshape(2, 3).tolist() == torch.arange(6).reshape(2, 3).tolist()
