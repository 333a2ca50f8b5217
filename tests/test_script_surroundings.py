"""What real scripts touch besides the op namespaces (issue 18, item 6), each used the way
scripts use it and compared with PyTorch: constants, finfo/iinfo, the legacy tensor types,
torch.nn.attention, torch._dynamo / torch.jit / torch.compiler, versions, and "cuda" under the
torch alias (that part in fresh interpreters: the alias cannot coexist with the real torch)."""

import math
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torchweb as tw
from oracle import assert_close, ours

_SRC = os.path.join(os.path.dirname(__file__), "..", "src")


# -- constants ------------------------------------------------------------------------------
def test_constants_are_pytorchs():
    for name in ("inf", "pi", "e"):
        assert getattr(tw, name) == getattr(torch, name), name
    assert math.isnan(tw.nan) and tw.newaxis is torch.newaxis is None


def test_constants_in_masking_and_indexing(device):
    x = torch.randn(3, 4)
    mask = torch.tensor([[True, False, True, False]] * 3)
    got = ours(x, device).masked_fill(ours(mask, device), -tw.inf).softmax(-1)
    assert_close(got, x.masked_fill(mask, -torch.inf).softmax(-1))
    assert_close(ours(x, device)[:, tw.newaxis] * tw.pi, x[:, torch.newaxis] * torch.pi)
    assert_close(tw.full((2,), tw.nan, device=device).isnan(), torch.full((2,), torch.nan).isnan())


# -- finfo / iinfo --------------------------------------------------------------------------
FLOATS = ["float16", "float32", "float64", "bfloat16"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_fields_are_pytorchs(name):
    got, want = tw.finfo(getattr(tw, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, field) == getattr(want, field), (name, field)
    assert repr(got) == repr(want)
    assert got == tw.finfo(getattr(tw, name))


def test_finfo_default_is_the_default_dtype():
    assert repr(tw.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize("name", INTS)
def test_iinfo_fields_are_pytorchs(name):
    got, want = tw.iinfo(getattr(tw, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(got, field) == getattr(want, field), (name, field)
    assert repr(got) == repr(want)


def test_finfo_iinfo_refuse_the_wrong_kind_as_pytorch():
    for ours_call, theirs_call in ((lambda: tw.finfo(tw.int32), lambda: torch.finfo(torch.int32)),
                                   (lambda: tw.iinfo(tw.float32), lambda: torch.iinfo(torch.float32)),
                                   (lambda: tw.iinfo(tw.bool), lambda: torch.iinfo(torch.bool))):
        with pytest.raises(TypeError) as want:
            theirs_call()
        with pytest.raises(TypeError) as got:
            ours_call()
        assert str(got.value) == str(want.value)


def test_finfo_as_scripts_use_it(device):
    # attention masks with the dtype's most negative value, clamping away from zero
    x = torch.randn(2, 5)
    m = torch.tensor([[False, True, False, False, True]] * 2)
    got = ours(x, device).masked_fill(ours(m, device), tw.finfo(tw.float32).min).softmax(-1)
    assert_close(got, x.masked_fill(m, torch.finfo(x.dtype).min).softmax(-1))
    got = ours(x, device).abs().clamp(min=tw.finfo(ours(x, device).dtype).eps).log()
    assert_close(got, x.abs().clamp(min=torch.finfo(x.dtype).eps).log())
    i = torch.tensor([3, -7])
    assert_close(ours(i, device).clamp(max=tw.iinfo(tw.int32).max), i.clamp(max=torch.iinfo(torch.int32).max))


# -- the legacy tensor types ----------------------------------------------------------------
LEGACY = ["FloatTensor", "HalfTensor", "ByteTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_type_constructors(name, device):
    ours_t, theirs_t = getattr(tw, name), getattr(torch, name)
    assert ours_t.dtype.name == str(theirs_t.dtype).replace("torch.", "")
    got = ours_t(2, 3, device=device)     # uninitialized, of that shape
    assert tuple(got.shape) == (2, 3) and got.dtype is ours_t.dtype and got.device.type == device
    assert tuple(ours_t(tw.Size([4, 1]), device=device).shape) == tuple(theirs_t(torch.Size([4, 1])).shape)
    assert tuple(ours_t(device=device).shape) == tuple(theirs_t().shape) == (0,)
    data = [[1, 0, 2], [3, 1, 0]]
    assert_close(ours_t(data, device=device), theirs_t(data))
    assert_close(ours_t((1, 2), device=device), theirs_t((1, 2)))   # a tuple is data, not a shape
    t = ours_t(data, device=device)
    assert ours_t(t) is t


def test_legacy_type_constructor_refusals():
    for make in (lambda T: T(2.5), lambda T: T(tw.zeros(2, dtype=tw.int64) if T is tw.FloatTensor
                                                  else torch.zeros(2, dtype=torch.long))):
        with pytest.raises(TypeError):
            make(torch.FloatTensor)
        with pytest.raises(TypeError):
            make(tw.FloatTensor)


def test_legacy_types_in_isinstance_follow_the_dtype(device):
    dtypes = ["float32", "float16", "uint8", "int32", "int64", "bool"]
    for d in dtypes:
        x, y = tw.zeros(2, dtype=getattr(tw, d), device=device), torch.zeros(2, dtype=getattr(torch, d))
        for name in LEGACY:
            assert isinstance(x, getattr(tw, name)) == isinstance(y, getattr(torch, name)), (d, name)
        assert isinstance(x, tw.cuda.FloatTensor) == (d == "float32" and device == "webgpu")
    assert not isinstance([1.0], tw.FloatTensor) and not issubclass(tw.FloatTensor, tw.Tensor)
    assert repr(tw.FloatTensor) == repr(torch.FloatTensor) and repr(tw.cuda.LongTensor) == repr(torch.cuda.LongTensor)


def test_legacy_types_in_annotations():
    import typing

    def f(x: tw.FloatTensor, y: typing.Optional[tw.LongTensor] = None) -> tw.BoolTensor | None:
        return x > 0
    hints = typing.get_type_hints(f)
    assert hints["x"] is tw.FloatTensor and hints["y"] == typing.Optional[tw.LongTensor]
    assert_close(f(tw.tensor([1.0, -1.0])), torch.tensor([True, False]))


def test_tensor_type_conversions(device):
    x = torch.tensor([1.5, -2.25, 0.0])
    ox = ours(x, device)
    assert ox.type() == x.type() == "torch.FloatTensor"
    for target in ("LongTensor", "IntTensor", "BoolTensor", "HalfTensor", "ByteTensor"):
        want = x.abs().type(getattr(torch, target))
        assert_close(ox.abs().type(getattr(tw, target)), want)
        assert_close(ox.abs().type("torch." + target), want)
        assert ox.abs().type(getattr(tw, target)).type() == want.type()
    assert_close(ox.type(tw.int32), x.type(torch.int32))
    assert ox.type("torch.cuda.FloatTensor").device.type == "webgpu"
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        ox.type("torch.Foo")


def test_module_type_with_a_legacy_type(device):
    m = tw.nn.Linear(3, 2).to(device).type(tw.HalfTensor)
    assert all(isinstance(p, tw.HalfTensor) for p in m.parameters())
    m.type(tw.FloatTensor)
    assert all(p.type() == "torch.FloatTensor" for p in m.parameters())
