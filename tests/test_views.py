"""Views and joins against PyTorch: view, reshape, permute, transpose, t, expand, squeeze,
unsqueeze, flatten, narrow, select, slicing (steps, negative bounds), contiguous, clone, storage
sharing (writes through a view reach the base), cat, stack, split, chunk."""

import pytest
import torch

import torchweb
from oracle import LAYOUTS, assert_close, check, make, ours


def meta(m, t):
    """What a view is, beyond its values: shape, strides, offset, contiguity."""
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.is_contiguous())


def check_view(fn, x, device, layout="contiguous"):
    """fn's result has PyTorch's values, and its strides and offset too (a view, not a copy)."""
    got = check(fn, x, device=device, layout=layout)
    if layout == "contiguous" and got is not None:
        expected = fn(torch, x.clone())
        if isinstance(expected, tuple):
            assert [meta(torchweb, g) for g in got] == [meta(torch, e) for e in expected]
        else:
            assert meta(torchweb, got) == meta(torch, expected)


VIEWS = {
    "view": lambda m, x: x.view(4, 6),
    "view_infer": lambda m, x: x.view(-1, 3),
    "view_tuple": lambda m, x: x.view((2, 2, 6)),
    "view_0d": lambda m, x: x[0, 0, 0].view(()),
    "view_as_1": lambda m, x: x[0, 0, 0].view(1, 1),
    "reshape": lambda m, x: m.reshape(x, (6, -1)),
    "reshape_method": lambda m, x: x.reshape(3, 8),
    "permute": lambda m, x: x.permute(2, 0, 1),
    "permute_neg": lambda m, x: m.permute(x, (-1, -3, -2)),
    "transpose": lambda m, x: x.transpose(0, 2),
    "transpose_neg": lambda m, x: m.transpose(x, -1, -2),
    "t": lambda m, x: x[0].t(),
    "t_1d": lambda m, x: x[0, 0].t(),
    "T": lambda m, x: x[0].T,
    "mT": lambda m, x: x.mT,
    "expand": lambda m, x: x[:, :1].expand(2, 5, 4),
    "expand_new_dims": lambda m, x: x[0, 0].expand(3, 2, 4),
    "expand_minus1": lambda m, x: x[:, :1].expand(-1, 3, -1),
    "expand_as": lambda m, x: x[0, :1].expand_as(x),
    "squeeze": lambda m, x: x[:, :1, :].squeeze(),
    "squeeze_dim": lambda m, x: x[:, :1].squeeze(1),
    "squeeze_non1": lambda m, x: x.squeeze(0),
    "squeeze_tuple": lambda m, x: x[:1, :1].squeeze((0, 1)),
    "unsqueeze": lambda m, x: x.unsqueeze(1),
    "unsqueeze_neg": lambda m, x: m.unsqueeze(x, -1),
    "unsqueeze_0d": lambda m, x: x[0, 0, 0].unsqueeze(0),
    "flatten": lambda m, x: x.flatten(),
    "flatten_range": lambda m, x: m.flatten(x, 1),
    "flatten_mid": lambda m, x: x.flatten(0, 1),
    "flatten_0d": lambda m, x: x[0, 0, 0].flatten(),
    "unflatten": lambda m, x: x.unflatten(2, (2, 2)),
    "narrow": lambda m, x: x.narrow(1, 1, 2),
    "narrow_neg_start": lambda m, x: m.narrow(x, -1, -3, 2),
    "select": lambda m, x: x.select(1, 2),
    "select_neg": lambda m, x: m.select(x, -1, -1),
    "movedim": lambda m, x: m.movedim(x, 0, -1),
    "swapaxes": lambda m, x: x.swapaxes(0, 1),
    "unbind": lambda m, x: m.unbind(x, 1),
    "as_strided": lambda m, x: x.as_strided((3, 2), (4, 1), 2),
}


@pytest.mark.parametrize("name", VIEWS)
def test_view_ops(device, name):
    x = make((2, 3, 4))
    check_view(VIEWS[name], x, device)


@pytest.mark.parametrize("name", [n for n in VIEWS if n not in ("view", "view_infer", "view_tuple", "as_strided", "mT")])
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_view_ops_of_strided(device, name, layout):
    check(VIEWS[name], make((2, 3, 4)), device=device, layout=layout)


def test_view_refuses_incompatible(device):
    x = make((4, 6))
    check(lambda m, a: a.t().view(24), x, device=device)
    check(lambda m, a: a.t().reshape(24), x, device=device)      # reshape copies instead
    check(lambda m, a: a.view(5, 5), x, device=device)
    check(lambda m, a: a.view(-1, -1), x, device=device)
    check(lambda m, a: a.reshape(7, -1), x, device=device)
    check(lambda m, a: a.t()[::2].view(3, 4), x, device=device)
    check(lambda m, a: a[:, ::2].view(4, 3), x, device=device)  # viewable: strides fold


def test_expand_errors(device):
    x = make((2, 3))
    check(lambda m, a: a.expand(3, 3), x, device=device)
    check(lambda m, a: a.expand(3), x, device=device)
    check(lambda m, a: a.permute(0, 0), x, device=device)
    check(lambda m, a: a.permute(0), x, device=device)
    check(lambda m, a: a.transpose(0, 2), x, device=device)
    check(lambda m, a: a.narrow(1, 2, 2), x, device=device)
    check(lambda m, a: a.select(0, 2), x, device=device)
    check(lambda m, a: a.flatten(1, 0), x, device=device)
    check(lambda m, a: a.unsqueeze(3), x, device=device)
    check(lambda m, a: a.reshape(2, 3, 4).t(), make((24,)), device=device)


# -- slicing ---------------------------------------------------------------------------------------
INDICES = [
    (slice(None), 1), (1, slice(None, None, 2)), (slice(-3, None), slice(None, -1)), (-1,), (-2, -1, 0),
    (slice(1, None, 3), slice(None, None, 2), slice(3, 0, 1)), (Ellipsis, 1), (None, 0), (0, None, Ellipsis, None),
    (slice(None, None, 4),), (slice(10, 20),), (slice(-10, 2),), (Ellipsis,), (), (slice(None), None, slice(2, 4)),
    (True,), (False,), (1, Ellipsis, slice(None, None, 3)), (torch.tensor(1), -1),
]


@pytest.mark.parametrize("index", INDICES, ids=str)
def test_getitem(device, index):
    x = make((4, 5, 6))
    idx = tuple(ours(i, "cpu") if isinstance(i, torch.Tensor) else i for i in index)
    got = ours(x, device)[idx]
    expected = x[index]
    assert_close(got, expected)
    assert tuple(got.stride()) == expected.stride() and got.storage_offset() == expected.storage_offset()


def test_getitem_errors(device):
    x = make((4, 5))
    for index in [(4,), (0, -6), (0, 0, 0), (slice(None, None, -1),), (slice(None, None, 0),), (1.5,)]:
        check(lambda m, a: a[index], x, device=device)


@pytest.mark.parametrize("index", INDICES[:12], ids=str)
def test_setitem(device, index):
    x = make((4, 5, 6))
    idx = tuple(ours(i, "cpu") if isinstance(i, torch.Tensor) else i for i in index)
    for value in (7.5, "tensor"):
        e = x.clone()
        target_shape = e[index].shape
        v = make(target_shape[-1:] if target_shape else ()) if value == "tensor" else value
        e[index] = v
        g = ours(x, device)
        g[idx] = ours(v, device) if isinstance(v, torch.Tensor) else v
        assert_close(g, e)


def test_setitem_int_into_float_and_broadcast(device):
    def run(m, a):
        a[0] = 3
        a[1:, ::2] = a[0, ::2]
        a[:, -1] = True
        return a
    check(run, make((3, 5)), device=device)
    check(run, make((3, 5), torch.int64), device=device)


# -- storage sharing -----------------------------------------------------------------------------
WRITES = {
    "slice_fill": lambda v: v.fill_(5),
    "add_": lambda v: v.add_(1),
    "copy_": lambda v: v.copy_(v * 0 - 2),
    "setitem": lambda v: v.__setitem__(Ellipsis, 9),
    "mul_": lambda v: v.mul_(3),
    "zero_": lambda v: v.zero_(),
}
VIEW_MAKERS = {
    "slice": lambda x: x[1:, ::2],
    "transpose": lambda x: x.t(),
    "view": lambda x: x.view(-1),
    "select": lambda x: x[2],
    "narrow": lambda x: x.narrow(1, 1, 3),
    "permute_of_view": lambda x: x.view(2, 2, 6).permute(2, 0, 1)[::3],
    "expand_unsqueeze": lambda x: x[0].unsqueeze(0),
    "diag_as_strided": lambda x: x.as_strided((4,), (7,)),
    "squeeze": lambda x: x[:1].squeeze(0),
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(3, 0)[2],
    "unbind": lambda x: x.unbind(1)[3],
}


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("view", VIEW_MAKERS)
def test_writes_through_views_reach_base(device, write, view):
    def run(m, x):
        v = VIEW_MAKERS[view](x)
        WRITES[write](v)
        return x
    check(run, make((4, 6)), device=device)


def test_view_sees_base_writes(device):
    def run(m, x):
        v = x.t()[1:]
        w = x.view(-1)
        x.mul_(2)
        x[0, 0] = 100
        return v.clone(), w
    check(run, make((3, 4)), device=device)


def test_clone_and_contiguous_do_not_share(device):
    def run(m, x):
        c = x.clone()
        d = x.t().contiguous()
        e = x.contiguous()  # already contiguous: the same tensor, shares
        x.fill_(1)
        return c, d, e
    check(run, make((3, 4)), device=device)
    x = ours(make((3, 4)), device)
    assert x.contiguous() is x
    assert x.t().contiguous().is_contiguous() and x.t().contiguous().stride() == (3, 1)


# -- joins ------------------------------------------------------------------------------------------
CAT_CASES = [
    ([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 5)], 1), ([(2, 3), (2, 3)], -1), ([(3,), (0,), (4,)], 0),
    ([(2, 3), (0,), (1, 3)], 0), ([(2, 0, 3), (2, 2, 3)], 1), ([(1, 2, 3, 1, 2), (1, 2, 3, 4, 2)], 3),
    ([(2, 3)], 0), ([(0, 3), (0, 3)], 0), ([(2, 3), (3, 3)], 1), ([(2, 3), (2, 3, 1)], 0), ([(), ()], 0),
]


@pytest.mark.parametrize("case", CAT_CASES, ids=str)
def test_cat(device, case):
    shapes, dim = case
    ts = [make(s) for s in shapes]
    check(lambda m, *a: m.cat(a, dim), *ts, device=device)
    check(lambda m, *a: m.cat(list(a), dim=dim), *ts, device=device, layout="transposed")


def test_cat_mixed_dtypes(device):
    check(lambda m, a, b: m.cat([a, b]), make((2,), torch.int64), make((3,)), device=device)
    check(lambda m, a, b: m.cat([a, b]), make((2,), torch.bool), make((3,), torch.int32), device=device)
    check(lambda m, a, b: m.cat([a, b], 1), make((2, 2), torch.uint8), make((2, 1), torch.float16), device=device)


def test_cat_into_out(device):
    def run(m, a, b):
        out = a.new_zeros(5, 3)
        r = m.cat([a, b], out=out)
        assert r is out
        return out
    check(run, make((2, 3)), make((3, 3)), device=device)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3, 3])
def test_stack(device, dim):
    a, b, c = make((2, 3)), make((2, 3)), make((2, 3))
    check(lambda m, *t: m.stack(t, dim), a, b, c, device=device)
    check(lambda m, *t: m.stack(t, dim), a, b, c, device=device, layout="strided")


def test_stack_cases(device):
    check(lambda m, a, b: m.stack([a, b]), make(()), make(()), device=device)
    check(lambda m, a, b: m.stack([a, b], 1), make((0, 2)), make((0, 2)), device=device)
    check(lambda m, a, b: m.stack([a, b]), make((2, 3)), make((3, 2)), device=device)
    check(lambda m, a, b: m.stack([a, b]), make((2,), torch.int32), make((2,)), device=device)
    check(lambda m, a, b: m.hstack([a, b]), make((2, 3)), make((2, 1)), device=device)
    check(lambda m, a, b: m.vstack([a, b]), make((3,)), make((2, 3)), device=device)


@pytest.mark.parametrize("arg", [1, 2, 3, 5, 7, [1, 4], [0, 5, 0], [2, 2]], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_split(device, arg, dim):
    x = make((5, 5, 2)) if dim != -1 else make((5, 2, 5))
    check(lambda m, a: m.split(a, arg, dim), x, device=device)
    check(lambda m, a: a.split(arg, dim=dim), x, device=device, layout="transposed")


@pytest.mark.parametrize("chunks", [1, 2, 3, 4, 5, 6, 8])
@pytest.mark.parametrize("size", [0, 1, 5, 6, 7])
def test_chunk(device, chunks, size):
    x = make((size, 3))
    check(lambda m, a: m.chunk(a, chunks), x, device=device)
    check(lambda m, a: a.chunk(chunks, 1), x, device=device)


def test_chunk_split_errors(device):
    x = make((4, 3))
    check(lambda m, a: a.chunk(0), x, device=device)
    check(lambda m, a: a.split([1, 2]), x, device=device)
    check(lambda m, a: a.split(0), x, device=device)
    check(lambda m, a: m.tensor_split(a, 3), x, device=device)
    check(lambda m, a: m.tensor_split(a, [1, 3], 1), x, device=device)
