"""tril_indices, triu_indices, unravel_index, combinations and the *_scatter ops (slice,
select, diagonal, as_strided) against PyTorch: forward, backward, errors, empty and 0-d."""

import itertools

import pytest
import torch

import torchweb
from oracle import assert_close, check, make, ours
from test_autograd_ops import run_case


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
def test_triangle_indices(device, fn):
    for row, col, off in itertools.product((0, 1, 3, 5), (0, 1, 4), (0, 1, -1, 3, -6, 10)):
        got = getattr(torchweb, fn)(row, col, off, device=device)
        assert got.device.type == device
        assert_close(got, getattr(torch, fn)(row, col, off))
    assert_close(getattr(torchweb, fn)(4, 3, offset=1, dtype=torchweb.int32, device=device),
                 getattr(torch, fn)(4, 3, offset=1, dtype=torch.int32))
    assert_close(getattr(torchweb, fn)(3, 3), getattr(torch, fn)(3, 3))
    for args, kw, err in (((-1, 3), {}, RuntimeError), ((3, -2), {}, RuntimeError),
                          ((3, 3), {"dtype": "float32"}, NotImplementedError),
                          ((3, 3), {"dtype": "bool"}, NotImplementedError)):
        tkw = {k: getattr(torch, v) for k, v in kw.items()}
        wkw = {k: getattr(torchweb, v) for k, v in kw.items()}
        with pytest.raises(err):
            getattr(torch, fn)(*args, **tkw)
        with pytest.raises(err):
            getattr(torchweb, fn)(*args, **wkw)


UNRAVEL = {
    "vector": lambda m, i: m.unravel_index(i, (3, 4)),
    "int_shape": lambda m, i: m.unravel_index(i, 12),
    "three": lambda m, i: m.unravel_index(i, (2, 3, 2)),
    "size": lambda m, i: m.unravel_index(i.reshape(3, 4), m.Size([4, 3])),
    "zero_d": lambda m, i: m.unravel_index(i[5], (3, 4)),
    "empty_shape": lambda m, i: m.unravel_index(i, ()),
    "negative": lambda m, i: m.unravel_index(i - 12, (3, 4)),
    "bad_shape": lambda m, i: m.unravel_index(i, (3, -4)),
    "float": lambda m, i: m.unravel_index(i.float(), (3, 4)),
    "bool": lambda m, i: m.unravel_index(i > 2, (3, 4)),
}


@pytest.mark.parametrize("name", UNRAVEL)
def test_unravel_index(device, name):
    check(UNRAVEL[name], torch.arange(12), device=device)
    check(UNRAVEL[name], torch.arange(12, dtype=torch.int32), device=device)


COMBOS = {
    "r2": lambda m, x: m.combinations(x),
    "r3": lambda m, x: m.combinations(x, 3),
    "r1": lambda m, x: m.combinations(x, r=1),
    "r0": lambda m, x: m.combinations(x, 0),
    "too_many": lambda m, x: m.combinations(x, 6),
    "replace": lambda m, x: m.combinations(x, 2, with_replacement=True),
    "replace3": lambda m, x: m.combinations(x, r=3, with_replacement=True),
    "negative": lambda m, x: m.combinations(x, -1),
    "two_d": lambda m, x: m.combinations(x.reshape(1, -1)),
    "empty": lambda m, x: m.combinations(x[:0], 2),
}


@pytest.mark.parametrize("name", COMBOS)
def test_combinations(device, name):
    check(COMBOS[name], make((5,)), device=device)
    check(COMBOS[name], make((5,), dtype=torch.int64), device=device)
    if name not in ("r0", "too_many", "negative", "two_d", "empty"):
        run_case(device, lambda T, x: COMBOS[name](T, x), lambda: (make((5,)),))


SCATTERS = {
    "slice": lambda m, x, s: m.slice_scatter(x, s[:, :2], 1, 1, 3),
    "slice_step": lambda m, x, s: x.slice_scatter(s[:, :2], dim=1, start=0, step=3),
    "slice_default": lambda m, x, s: m.slice_scatter(x, s[:3]),
    "slice_neg": lambda m, x, s: m.slice_scatter(x, s[:, :, :1], -1, -1),
    "slice_big_end": lambda m, x, s: m.slice_scatter(x, s[:, 1:], 1, 1, 100),
    "select": lambda m, x, s: m.select_scatter(x, s[:, 0], 1, 2),
    "select_neg": lambda m, x, s: x.select_scatter(s[:, :, 0], -1, -1),
    "diagonal": lambda m, x, s: m.diagonal_scatter(x, s[:, :, 0], 0, 1, 2),
    "diagonal_off": lambda m, x, s: x.diagonal_scatter(s[:2, 0, :].t(), offset=1, dim1=1, dim2=0),
    "diagonal_default": lambda m, x, s: m.diagonal_scatter(x, s[0, :1].t().expand(5, 3).contiguous()),
    "as_strided": lambda m, x, s: m.as_strided_scatter(x, s[0, :2, :2], (2, 2), (1, 3), 2),
    "as_strided_default": lambda m, x, s: x.as_strided_scatter(s[0, :3, 0], (3,), (5,)),
    "bad_shape": lambda m, x, s: m.slice_scatter(x, s[:, :3], 1, 1, 3),
    "bad_select": lambda m, x, s: m.select_scatter(x, s[:, :2, 0], 1, 0),
    "bad_index": lambda m, x, s: m.select_scatter(x, s[:, 0], 1, 7),
    "bad_diag": lambda m, x, s: m.diagonal_scatter(x, s[0, :2], 0, 1, 2),
}


@pytest.mark.parametrize("name", SCATTERS)
def test_scatters(device, name):
    x, s = make((3, 4, 5)), make((3, 4, 5))
    check(SCATTERS[name], x, s, device=device)
    check(SCATTERS[name], x.long(), s.long(), device=device)
    check(SCATTERS[name], x, s.long(), device=device)         # src converted to input's dtype
    if not name.startswith("bad") and not name.startswith("as_strided"):
        run_case(device, lambda T, a, b: SCATTERS[name](T, a, b), lambda: (make((3, 4, 5)), make((3, 4, 5))))


def _as_strided_scatter_by_views(m, x, s, size, stride, offset=None):
    out = x.clone()
    out.as_strided(size, stride, offset).copy_(s)
    return out


def test_as_strided_scatter_backward(device):
    """PyTorch 2.13's own as_strided_scatter backward sends input the gradient of the positions
    src overwrote (x = ones(2, 3), src = ones(3), size (3,), stride (2,): x.grad is nonzero exactly
    where the output came from src); the gradient is checked against the same op written from
    clone, as_strided and copy_, whose backward PyTorch gets right."""
    for size, stride, off, src in (((2, 2), (1, 3), 2, (2, 2)), ((3,), (5,), None, (3,))):
        run_case(device, lambda T, a, b: (T.as_strided_scatter(a, b, size, stride, off) if T is torchweb
                                          else _as_strided_scatter_by_views(T, a, b, size, stride, off)),
                 lambda: (make((3, 4, 5)), make(src)))


def test_scatter_leaves_input_alone(device):
    x = make((4, 4))
    a = ours(x, device)
    r = torchweb.select_scatter(a, torchweb.zeros(4, device=device), 0, 1)
    assert_close(a, x)
    assert_close(r, torch.select_scatter(x, torch.zeros(4), 0, 1))
    check(lambda m, t: m.slice_scatter(t, t[:0], 0, 0, 0), make((3, 2)), device=device)
    check(lambda m, t: m.select_scatter(t, t[0, 0], 0, 1), make((3,)), device=device)
