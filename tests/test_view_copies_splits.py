"""The *_copy functions, the split family (split_with_sizes, unsafe_split, unsafe_chunk, hsplit,
vsplit, dsplit), ravel, row_stack, constant_pad_nd and the small predicates (is_nonzero,
is_same_size, is_signed, isposinf, isneginf, isreal, positive) against PyTorch."""

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours
from test_autograd_ops import run_case

COPIES = {
    "view_copy": lambda m, x: m.view_copy(x, (6, 4)),
    "view_copy_int": lambda m, x: m.view_copy(x, [-1]),
    "permute_copy": lambda m, x: m.permute_copy(x, (2, 0, 1)),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 2),
    "t_copy": lambda m, x: m.t_copy(x[0]),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:, :1]),
    "squeeze_copy_dim": lambda m, x: m.squeeze_copy(x[:, :1], 1),
    "select_copy": lambda m, x: m.select_copy(x, 1, -1),
    "slice_copy": lambda m, x: m.slice_copy(x, 2, 1, 4, 2),
    "slice_copy_default": lambda m, x: m.slice_copy(x),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1, 1, 2),
    "expand_copy": lambda m, x: m.expand_copy(x[:, :1], (5, 2, 3, 4)),
    "narrow_copy": lambda m, x: m.narrow_copy(x, 2, 1, 2),
    "narrow_copy_method": lambda m, x: x.narrow_copy(0, 1, 1),
    "detach_copy": lambda m, x: m.detach_copy(x),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "unbind_copy": lambda m, x: m.unbind_copy(x, 1),
    "split_copy": lambda m, x: m.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 2], 1),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 2, 2, 1),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (3, 2), (1, 4), 1),
    "bad_view": lambda m, x: m.view_copy(x, (5, 5)),
    "bad_select": lambda m, x: m.select_copy(x, 1, 9),
}


@pytest.mark.parametrize("name", COPIES)
def test_view_copies(device, name):
    check(COPIES[name], make((2, 3, 4)), device=device)
    check(COPIES[name], make((2, 3, 4), dtype=torch.int64), device=device)
    if not name.startswith("bad") and name != "detach_copy":
        run_case(device, lambda T, x: COPIES[name](T, x), lambda: (make((2, 3, 4)),))


def test_copies_share_nothing_and_take_out(device):
    x = ours(torch.zeros(2, 3), device)
    c = torchweb.transpose_copy(x, 0, 1)
    c.fill_(5)
    assert_close(x, torch.zeros(2, 3))
    assert c.is_contiguous()
    o = ours(torch.zeros(3, 2), device)
    assert torchweb.t_copy(ours(torch.arange(6.0).reshape(2, 3), device), out=o) is o
    assert_close(o, torch.arange(6.0).reshape(2, 3).t())


SPLITS = {
    "split_with_sizes": lambda m, x: m.split_with_sizes(x, [1, 3], 1),
    "split_with_sizes_method": lambda m, x: x.split_with_sizes([2, 0, 2], dim=-1),
    "split_with_sizes_bad_sum": lambda m, x: m.split_with_sizes(x, [1, 1], 1),
    "split_with_sizes_negative": lambda m, x: m.split_with_sizes(x, [5, -1], 1),
    "unsafe_split": lambda m, x: m.unsafe_split(x, 3, 1),
    "unsafe_chunk": lambda m, x: x.unsafe_chunk(3, -1),
    "hsplit": lambda m, x: m.hsplit(x, 2),
    "hsplit_idx": lambda m, x: x.hsplit([1, 3]),
    "hsplit_1d": lambda m, x: m.hsplit(x[0, 0], 2),
    "hsplit_bad": lambda m, x: m.hsplit(x, 3),
    "vsplit": lambda m, x: m.vsplit(x, [1]),
    "vsplit_int": lambda m, x: x.vsplit(2),
    "vsplit_1d": lambda m, x: m.vsplit(x[0, 0], 2),
    "dsplit": lambda m, x: m.dsplit(x, 2),
    "dsplit_2d": lambda m, x: m.dsplit(x[0], 2),
    "dsplit_bad": lambda m, x: m.dsplit(x, 3),
    "ravel": lambda m, x: m.ravel(x),
    "ravel_t": lambda m, x: x.transpose(0, 2).ravel(),
    "row_stack": lambda m, x: m.row_stack([x[0], x[1, :1], x[0, 0].unsqueeze(0)]),
    "row_stack_1d": lambda m, x: m.row_stack((x[0, 0], x[1, 1])),
}


@pytest.mark.parametrize("name", SPLITS)
def test_splits(device, name):
    check(SPLITS[name], make((2, 4, 4)), device=device)
    if "bad" not in name and "negative" not in name and name not in ("vsplit_1d", "dsplit_2d"):
        run_case(device, lambda T, x: SPLITS[name](T, x), lambda: (make((2, 4, 4)),))


def test_ravel_is_a_view_when_contiguous(device):
    x = ours(torch.zeros(2, 3), device)
    r = torchweb.ravel(x)
    r[0] = 7
    assert x[0, 0].item() == 7


PAD = {
    "pad": lambda m, x: m.constant_pad_nd(x, [1, 1, 0, 1], 2.5),
    "crop": lambda m, x: m.constant_pad_nd(x, [-1, 1]),
    "three": lambda m, x: m.constant_pad_nd(x, (1, 0, 2, 0, 0, 1), value=-1),
    "odd": lambda m, x: m.constant_pad_nd(x, [1]),
}


@pytest.mark.parametrize("name", PAD)
def test_constant_pad_nd(device, name):
    check(PAD[name], make((2, 3, 4)), device=device)
    check(PAD[name], make((2, 3, 4), dtype=torch.int64), device=device)
    if name != "odd":
        run_case(device, lambda T, x: PAD[name](T, x), lambda: (make((2, 3, 4)),))


PREDICATES = {
    "is_nonzero": lambda m, x: m.is_nonzero(x.reshape(-1)[:1]),
    "is_nonzero_0d": lambda m, x: x.reshape(-1)[2].is_nonzero(),
    "is_nonzero_many": lambda m, x: m.is_nonzero(x),
    "is_nonzero_empty": lambda m, x: m.is_nonzero(x[:0]),
    "is_same_size": lambda m, x: m.is_same_size(x, x.clone()),
    "is_same_size_no": lambda m, x: x.is_same_size(x.t()),
    "is_signed": lambda m, x: m.is_signed(x),
    "isposinf": lambda m, x: m.isposinf(x),
    "isneginf": lambda m, x: x.isneginf(),
    "isreal": lambda m, x: m.isreal(x),
    "positive": lambda m, x: m.positive(x),
    "positive_method": lambda m, x: x.positive(),
}


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates(device, name):
    for dt in (torch.float32, torch.int64, torch.uint8, torch.bool, torch.int32, torch.float16):
        check(PREDICATES[name], make((3, 4), dtype=dt, special=True), device=device)
    check(PREDICATES[name], torch.tensor([[0.0]]), device=device)


def test_isposinf_out(device):
    x = make((3, 4), special=True)
    o = ours(torch.zeros(3, 4, dtype=torch.bool), device)
    assert torchweb.isposinf(ours(x, device), out=o) is o
    assert_close(o, torch.isposinf(x))


def test_unsafe_split_with_sizes(device):
    check(lambda m, x: m.unsafe_split_with_sizes(x, [1, 3], 1), make((2, 4)), device=device)
    check(lambda m, x: x.unsafe_split_with_sizes([2, 2], dim=-1), make((2, 4)), device=device)


def test_fill(device):
    for dt in (torch.float32, torch.int64, torch.bool):
        check(lambda m, x: m.fill(x, 2.5), make((2, 3), dtype=dt), device=device)
    check(lambda m, x: m.fill(x, m.tensor(3.0)), make((2, 3)), device=device)
    check(lambda m, x: m.fill(x, m.tensor([3.0, 4.0])), make((2, 3)), device=device)
    x = make((2, 3))
    a = ours(x, device)
    torchweb.fill(a, 9.0)
    assert_close(a, x)       # a copy: input untouched
