"""nn.functional names beyond the layers' ops, against PyTorch: pdist (every p, equal rows,
gradients), conv_tbc, native_channel_shuffle, and the protocol helpers code imports from F
(has_torch_function*, handle_torch_function, boolean_dispatch, assert_int_or_pair,
BroadcastingList*, the grid_sample mode tables, the note tables)."""

import pytest
import torch
import torch.nn.functional as TF

import torchweb
from oracle import assert_close, make, ours

WF = torchweb.nn.functional


@pytest.mark.parametrize("p", [2, 1, 0, 0.5, 3, 1.5, float("inf")])
@pytest.mark.parametrize("shape", [(5, 3), (2, 4), (6, 1)])
def test_pdist(device, p, shape):
    x = make(shape)
    x[1] = x[0]                    # a zero distance: PyTorch's gradient there is 0
    if shape[0] > 3 and shape[1] > 1:
        x[2, 1] = x[3, 1] + 0.5        # rows differing in one entry
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e = TF.pdist(tx, p)
    g = WF.pdist(wx, p)
    assert_close(g, e, rtol=1e-5, atol=1e-5)
    up = make(tuple(e.shape))
    e.backward(up)
    g.backward(ours(up, device))
    assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)
    assert_close(torchweb.pdist(ours(x, device), p), e.detach(), rtol=1e-5, atol=1e-5)


def test_pdist_inf_ties(device):
    x = torch.tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0], [2.0, 0.0]])
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    TF.pdist(tx, float("inf")).sum().backward()
    WF.pdist(wx, float("inf")).sum().backward()
    assert_close(wx.grad, tx.grad)


@pytest.mark.parametrize("shape", [(1, 3), (0, 3), (3, 0)])
def test_pdist_degenerate(device, shape):
    x = make(shape)
    assert_close(WF.pdist(ours(x, device)), TF.pdist(x))


@pytest.mark.parametrize("make_args", [lambda: (make((2, 3, 4)),), lambda: (make((3, 2)), -1.0),
                                       lambda: (make((3, 2), dtype=torch.int64),)])
def test_pdist_errors(device, make_args):
    args = make_args()
    with pytest.raises(RuntimeError) as info:
        TF.pdist(*args)
    with pytest.raises(RuntimeError) as mine:
        WF.pdist(*[ours(a, device) if isinstance(a, torch.Tensor) else a for a in args])
    assert str(mine.value) == str(info.value)


@pytest.mark.parametrize("shapes,pad", [(((5, 2, 3), (2, 3, 4), (4,)), 0), (((5, 2, 3), (3, 3, 4), (4,)), 2),
                                        (((1, 3, 2), (1, 2, 5), (5,)), 0)])
def test_conv_tbc(device, shapes, pad):
    ts = [make(s).requires_grad_(True) for s in shapes]
    ws = [ours(t.detach(), device, requires_grad=True) for t in ts]
    e = torch.conv_tbc(*ts, pad)
    g = WF.conv_tbc(*ws, pad)
    assert_close(g, e, rtol=1e-5, atol=1e-5)
    up = make(tuple(e.shape))
    e.backward(up)
    g.backward(ours(up, device))
    for a, b in zip(ws, ts):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    assert_close(torchweb.conv_tbc(*[w.detach() for w in ws], pad=pad), e.detach(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes", [((5, 3), (2, 3, 4), (4,)), ((5, 2, 3), (3, 4), (4,)), ((5, 2, 3), (2, 3, 4), (1, 4)),
                                    ((5, 2, 3), (2, 2, 4), (4,)), ((5, 2, 3), (2, 3, 4), (3,)), ((5, 2, 3), (9, 3, 4), (4,))])
def test_conv_tbc_errors(device, shapes):
    ts = [make(s) for s in shapes]
    with pytest.raises(RuntimeError) as info:
        torch.conv_tbc(*ts)
    with pytest.raises(RuntimeError) as mine:
        WF.conv_tbc(*[ours(t, device) for t in ts])
    assert str(mine.value) == str(info.value)


def test_native_channel_shuffle(device):
    x = make((2, 6, 3, 2))
    assert_close(WF.native_channel_shuffle(ours(x, device), 3), TF.native_channel_shuffle(x, 3), rtol=0, atol=0)
    assert_close(torchweb.native_channel_shuffle(ours(x, device), 2), torch.native_channel_shuffle(x, 2), rtol=0, atol=0)
    with pytest.raises(RuntimeError):
        WF.native_channel_shuffle(ours(x, device), 4)


def test_torch_function_helpers(device):
    t = ours(make((2,)), device)
    for F in (TF, WF):
        assert F.has_torch_function((t,)) is False and F.has_torch_function_unary(t) is False
        assert F.has_torch_function_variadic(t, 2) is False
    assert_close(WF.handle_torch_function(torchweb.add, (t,), t, 2), torch.tensor(t.tolist()) + 2)
    assert WF.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert WF.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    assert WF.BroadcastingList2[int] is TF.BroadcastingList2[int] is None and WF.DType is TF.DType
    for name in ("tf32_notes", "reproducibility_notes", "sparse_support_notes"):
        assert set(getattr(WF, name)) == set(getattr(TF, name))


def test_boolean_dispatch_and_assert_int_or_pair():
    for F in (TF, WF):
        def with_idx(x, flag=False):
            """doc"""
            return ("with", x)

        def without(x, flag=False):
            return ("without", x)

        f = F.boolean_dispatch("flag", 1, False, with_idx, without, "m", "f")
        assert f(1) == ("without", 1) and f(1, True) == ("with", 1) and f(1, flag=True) == ("with", 1)
        assert f.__name__ == "f" and f.__module__ == "m" and f.__doc__ == "doc"
        F.assert_int_or_pair(3, "k", "bad {}")
        F.assert_int_or_pair((1, 2), "k", "bad {}")
        with pytest.raises(AssertionError, match="bad k"):
            F.assert_int_or_pair([1, 2, 3], "k", "bad {}")

    def a():
        """a"""

    def b():
        """b"""
    for F in (TF, WF):
        with pytest.raises(RuntimeError, match="only one function can have a docstring"):
            F.boolean_dispatch("flag", 0, False, a, b, None, None)
