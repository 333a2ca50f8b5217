"""Creation and conversion against PyTorch: tensor, as_tensor, from_numpy, zeros/ones/full/empty
(and _like), arange, linspace, eye; item, tolist, numpy; .to() between devices and dtypes."""

import math

import numpy as np
import pytest
import torch

import torchweb
from oracle import OUR_DTYPE, TORCH_DTYPE, assert_close, make, ours


def same(got, expected, device):
    """got matches expected in values, shape and dtype, and lives on `device`."""
    assert_close(got, expected, rtol=0, atol=0)
    assert got.device.type == device


DATA = [
    1, 2.5, True, -7, [], [1, 2, 3], [1.0, 2, 3], [True, False], [[1, 2], [3, 4]], [[1.5], [2.5]],
    [[[1, 2, 3]], [[4, 5, 6]]], [True, 2], [True, 2.5], [float("nan"), float("inf")], [[]], [[], []],
    (1, 2), [(1, 2), (3, 4)], [2**31 - 1, -2**31], 1e38, -0.0,
]


@pytest.mark.parametrize("data", DATA, ids=repr)
def test_tensor_infers_dtype(device, data):
    same(torchweb.tensor(data, device=device), torch.tensor(data), device)


@pytest.mark.parametrize("dtype", list(TORCH_DTYPE), ids=str)
@pytest.mark.parametrize("data", [[1, 0, -2], [1.5, -0.5, 2.0], [True, False, True], 3, [[0, 1]]], ids=repr)
def test_tensor_with_dtype(device, dtype, data):
    tdt = TORCH_DTYPE[dtype]
    if tdt is torch.uint8 and data == [1.5, -0.5, 2.0]:
        data = [1.5, 0.5, 2.0]  # float -> uint8 of a negative is undefined behaviour in C
    same(torchweb.tensor(data, dtype=OUR_DTYPE[tdt], device=device), torch.tensor(data, dtype=tdt), device)


def test_tensor_of_tensors_and_ragged(device):
    same(torchweb.tensor([torchweb.tensor(1.5), 2.0], device=device), torch.tensor([torch.tensor(1.5), 2.0]), device)
    for bad in ([[1, 2], [3]], [[1], 2], [1, [2]], ["a"], [[1], []]):
        with pytest.raises(Exception) as ours_err:
            torchweb.tensor(bad, device=device)
        with pytest.raises(Exception) as theirs:
            torch.tensor(bad)
        assert isinstance(ours_err.value, type(theirs.value)) or isinstance(theirs.value, type(ours_err.value))


def test_tensor_copies(device):
    src = ours(make((3,)), device)
    t = torchweb.tensor(src)
    t.add_(1)
    e = torch.tensor([1.0, 2.0])
    assert_close(src, torch.tensor(src.tolist()))
    assert not torch.equal(torch.tensor(t.tolist()), torch.tensor(src.tolist()))
    same(torchweb.tensor([1.0, 2.0], device=device), e, device)


@pytest.mark.parametrize("np_dtype", ["float32", "float16", "int32", "int64", "uint8", "bool"])
def test_from_numpy_and_as_tensor(device, np_dtype):
    a = (np.arange(12).reshape(3, 4) - 4).astype(np_dtype)
    same(torchweb.from_numpy(a), torch.from_numpy(a), "cpu")
    same(torchweb.as_tensor(a, device=device), torch.as_tensor(a), device)
    same(torchweb.tensor(a, device=device), torch.tensor(a), device)
    same(torchweb.tensor(a[:, ::2].T, device=device), torch.tensor(a[:, ::2].T), device)


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32)
    t = torchweb.from_numpy(a)
    e = torch.from_numpy(a.copy())
    a[0] = 42          # numpy -> tensor
    e[0] = 42
    t[1] = -1          # tensor -> numpy
    e[1] = -1
    assert_close(t, e)
    assert a[1] == -1


def test_from_numpy_float64_becomes_float32():
    # WebGPU has no float64: numpy's default float arrives as float32 (documented in _creation)
    a = np.array([0.1, 1e-3, 3.0])
    assert_close(torchweb.from_numpy(a), torch.from_numpy(a).float())


def test_as_tensor_of_tensor(device):
    x = ours(make((3,)), device)
    assert torchweb.as_tensor(x) is x
    same(torchweb.as_tensor(x, dtype=torchweb.int32), torch.as_tensor(torch.tensor(x.tolist()), dtype=torch.int32), device)


# -- filled -------------------------------------------------------------------------------------
SIZES = [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 2, 1, 3, 1)]


@pytest.mark.parametrize("size", SIZES, ids=str)
@pytest.mark.parametrize("dtype", [None, torch.float32, torch.int64, torch.int32, torch.bool, torch.uint8, torch.float16], ids=str)
def test_zeros_ones_full(device, size, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    okw = {} if dtype is None else {"dtype": OUR_DTYPE[dtype]}
    same(torchweb.zeros(size, device=device, **okw), torch.zeros(size, **kw), device)
    same(torchweb.ones(*size, device=device, **okw) if size else torchweb.ones(size, device=device, **okw),
         torch.ones(*size, **kw) if size else torch.ones(size, **kw), device)
    for v in (7, 2.5, True, -1):
        if dtype is torch.uint8 and v == -1:
            continue  # torch refuses filling uint8 with -1 (overflow); covered in test_errors
        same(torchweb.full(size, v, device=device, **okw), torch.full(size, v, **kw), device)
    e = torchweb.empty(size, device=device, **okw)
    assert tuple(e.shape) == tuple(torch.empty(size, **kw).shape) and e.dtype.name == str(torch.empty(size, **kw).dtype)[6:]


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.float16], ids=str)
def test_like(device, dtype):
    x = make((2, 3), dtype)
    o = ours(x, device).t()
    xt = x.t()
    same(torchweb.zeros_like(o), torch.zeros_like(xt), device)
    same(torchweb.ones_like(o), torch.ones_like(xt), device)
    same(torchweb.full_like(o, 3), torch.full_like(xt, 3), device)
    same(torchweb.zeros_like(o, dtype=torchweb.int32), torch.zeros_like(xt, dtype=torch.int32), device)
    same(torchweb.ones_like(o, device="cpu"), torch.ones_like(xt), "cpu")
    assert tuple(torchweb.empty_like(o).shape) == tuple(torch.empty_like(xt).shape)
    same(o.new_zeros(4), xt.new_zeros(4), device)
    same(o.new_ones((2, 2)), xt.new_ones((2, 2)), device)
    same(o.new_full((2,), 5), xt.new_full((2,), 5), device)
    same(o.new_tensor([1, 2]), xt.new_tensor([1, 2]), device)


# -- ranges ---------------------------------------------------------------------------------------
ARANGES = [(5,), (0,), (2, 7), (2, 7, 2), (7, 2, -1), (7, 2, -2), (-3, 3), (0.0, 1.0, 0.1), (1, 2.5, 0.5),
           (2.5,), (-1.0, -5.0, -0.75), (0, 10, 3), (10, 0, -3), (5, 5), (0, 1, 0.3)]


@pytest.mark.parametrize("args", ARANGES, ids=str)
def test_arange(device, args):
    same(torchweb.arange(*args, device=device), torch.arange(*args), device)
    assert_close(torchweb.arange(*args, dtype=torchweb.float32, device=device), torch.arange(*args, dtype=torch.float32))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float16"])
def test_arange_dtypes(device, dtype):
    """Integer ranges (packed from a Python range, ends range-checked) in every dtype."""
    # (float16 ranges stay where its integers are exact: PyTorch's CPU kernel computes a half
    # arange in half precision, rounding larger values its own way)
    for args in [(5,), (3, 20, 4), (20, 3, -4), (-7, 2000 if dtype == "float16" else 100000, 3)]:
        assert_close(torchweb.arange(*args, dtype=getattr(torchweb, dtype), device=device),
                     torch.arange(*args, dtype=getattr(torch, dtype)))


def test_tensor_float16_rounds_to_max_below_65520(device):
    check = [65519.0, 65520.0, 65510.0, -65519.0, -65520.0]
    assert_close(torchweb.tensor(check, dtype=torchweb.float16, device=device),
                 torch.tensor(check, dtype=torch.float16))


def test_arange_past_int32_on_webgpu():
    with pytest.raises(RuntimeError, match="out of range for torch.int64 on webgpu"):
        torchweb.arange(2**31 - 2, 2**31 + 2, device="webgpu")
    with pytest.raises(RuntimeError, match="out of range for torch.int64 on webgpu"):
        torchweb.arange(-2**31 + 1, -2**31 - 3, -1, device="webgpu")
    assert torchweb.arange(2**31 - 3, 2**31 - 1, device="webgpu").tolist() == [2**31 - 3, 2**31 - 2]


def test_arange_errors(device):
    for args in [(0, 5, 0), (5, 0, 1), (0, 5, -1)]:
        with pytest.raises(RuntimeError):
            torch.arange(*args)
        with pytest.raises(RuntimeError):
            torchweb.arange(*args, device=device)


LINSPACES = [(0, 1, 5), (0, 1, 1), (0, 1, 0), (-2.5, 7.5, 11), (3, -3, 7), (0, 10, 4), (1, 1, 3), (0, 1e6, 9)]


@pytest.mark.parametrize("args", LINSPACES, ids=str)
def test_linspace(device, args):
    same_vals = torchweb.linspace(*args, device=device)
    assert_close(same_vals, torch.linspace(*args), rtol=1e-6, atol=1e-6)
    assert_close(torchweb.linspace(*args, dtype=torchweb.int64, device=device), torch.linspace(*args, dtype=torch.int64))


@pytest.mark.parametrize("nm", [(0,), (1,), (3,), (2, 4), (4, 2), (3, 0)], ids=str)
def test_eye(device, nm):
    same(torchweb.eye(*nm, device=device), torch.eye(*nm), device)
    same(torchweb.eye(*nm, dtype=torchweb.int64, device=device), torch.eye(*nm, dtype=torch.int64), device)
    same(torchweb.eye(*nm, dtype=torchweb.bool, device=device), torch.eye(*nm, dtype=torch.bool), device)


# -- readback ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(TORCH_DTYPE), ids=str)
def test_item_tolist_numpy(device, dtype):
    tdt = TORCH_DTYPE[dtype]
    x = make((2, 3), tdt, low=-3, high=3, special=tdt.is_floating_point)
    o = ours(x, device)
    for a, b in [(o, x), (o.t(), x.t()), (o[1, ::2], x[1, ::2]), (o[0, 0], x[0, 0])]:
        got, exp = a.tolist(), b.tolist()
        assert type(got) is type(exp)
        assert _same_nested(got, exp)
        if tdt is torch.bfloat16:   # numpy has no bfloat16: both refuse (tests/test_bfloat16.py)
            continue
        n = a.numpy()
        assert n.dtype == b.numpy().dtype and n.shape == b.numpy().shape
        np.testing.assert_array_equal(n, b.numpy())
    v, e = o[1, 2].item(), x[1, 2].item()
    assert type(v) is type(e) and (v == e or (v != v and e != e))
    for bad in (o, o[:0]):
        with pytest.raises(RuntimeError):
            bad.item()


def _same_nested(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same_nested(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def test_python_conversions(device):
    x = ours(torch.tensor([2.75]), device)
    assert float(x) == 2.75 and int(x) == 2 and bool(x) is True
    assert [int(v) for v in ours(torch.tensor([3, 1]), device)] == [3, 1]
    assert f"{ours(torch.tensor(1.5), device):.2f}" == f"{torch.tensor(1.5):.2f}"
    assert list(range(10))[ours(torch.tensor(3), device)] == 3
    with pytest.raises(RuntimeError):
        bool(ours(torch.tensor([1, 2]), device))
    with pytest.raises(TypeError):
        len(ours(torch.tensor(1), device))
    assert len(ours(torch.zeros(4, 2), device)) == 4


# -- .to() ---------------------------------------------------------------------------------------------
CASTS = [(a, b) for a in TORCH_DTYPE for b in TORCH_DTYPE]


@pytest.mark.parametrize("src,dst", CASTS, ids=str)
def test_to_dtype(device, src, dst):
    s, d = TORCH_DTYPE[src], TORCH_DTYPE[dst]
    x = make((3, 4), s, low=-3 if d is not torch.uint8 else 0, high=40)
    if s.is_floating_point:
        x = torch.cat([x.reshape(-1), torch.tensor([0.5, -0.0, 1e-3], dtype=s)]).reshape(3, 5)
    e = x.to(d)
    assert_close(ours(x, device).to(OUR_DTYPE[d]), e)
    assert_close(ours(x, device).t().to(dtype=OUR_DTYPE[d]), x.t().to(d))


def test_float_to_int_truncates(device):
    x = torch.tensor([2.7, -2.7, 0.5, -0.5, 100.9, -100.9])
    for d in (torch.int64, torch.int32, torch.bool):
        assert_close(ours(x, device).to(OUR_DTYPE[d]), x.to(d))
    assert_close(ours(x.abs(), device).to(torchweb.uint8), x.abs().to(torch.uint8))


def test_to_device_and_back(device):
    other = "cpu" if device == "webgpu" else "webgpu"
    for dtype in TORCH_DTYPE.values():
        x = make((3, 4), dtype)
        o = ours(x, device)
        moved = o.to(other)
        same(moved, x, other)
        same(moved.to(device), x, device)
        same(o.t().to(other), x.t(), other)
        same(o.to(other, OUR_DTYPE[torch.float32]), x.float(), other)
        same(o.to(device=other, dtype=OUR_DTYPE[torch.int32]), x.int(), other)
        same(getattr(o, other)(), x, other)
    x = make((2, 3))
    o = ours(x, device)
    assert o.to(device) is o and o.to(torchweb.float32) is o
    c = o.to(device, copy=True)
    c.add_(1)
    assert_close(o, x)
    same(o.to(ours(torch.tensor([1], dtype=torch.int32), other)), x.int(), other)


def test_type_conversion_methods(device):
    x = make((2, 3), low=-3, high=3)
    o = ours(x, device)
    for name in ("float", "half", "int", "long", "bool", "byte"):
        got = getattr(o.abs(), name)()
        assert_close(got, getattr(x.abs(), name)())
    assert o.type() == x.type()
    assert_close(o.type(torchweb.int32), x.type(torch.int32))


@pytest.mark.parametrize("np_dtype", ["float32", "int64", "bool"])
def test_tensor_copies_and_as_tensor_shares_as_pytorch(np_dtype):
    # torch.tensor always copies a numpy array; torch.as_tensor shares a cpu one's memory
    for make in (torch.tensor, torch.as_tensor):
        a, b = np.zeros(4, dtype=np_dtype), np.zeros(4, dtype=np_dtype)
        theirs, ours = make(a), getattr(torchweb, make.__name__)(b, device="cpu")
        a[0] = b[0] = 1
        assert ours.tolist() == theirs.tolist()


def test_tensor_from_long_rows_of_numbers_as_pytorch():
    # rows of plain numbers take the fast path (whole rows, C loops): same dtypes, values and errors
    rows = [[1.5, 2, True], [0, -3, 4.25]]
    for data in (rows, [[1, 2], [3, 4]], [[True, False]], [1, 2.5] * 1000, [[1, 2], [3]], [[1, [2]], [3, 4]],
                 [[1, 2], 3]):
        try:
            expected = torch.tensor(data)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)):
                torchweb.tensor(data, device="cpu")
            continue
        got = torchweb.tensor(data, device="cpu")
        assert str(got.dtype) == str(expected.dtype)
        assert got.tolist() == expected.tolist()
