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
    assert WF.BroadcastingList1[float] is WF.BroadcastingList3[int] is TF.BroadcastingList1[float] is None
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


# -- nn leftovers: Container, DataParallel, factory_kwargs, LinearCrossEntropyOptions -----------
def test_container_and_data_parallel(device):
    for nn in (torch.nn, torchweb.nn):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
        assert [n for n, _ in c.named_children()] == ["a", "b"]
    with pytest.warns(FutureWarning):
        assert repr(torchweb.nn.Container(a=torchweb.nn.ReLU())) == repr(torch.nn.Container(a=torch.nn.ReLU()))
    ref = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    mine = torchweb.nn.DataParallel(torchweb.nn.Linear(3, 2)).to(device)
    assert repr(mine) == repr(ref) and list(mine.state_dict()) == list(ref.state_dict()) == ["module.weight", "module.bias"]
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    x = make((4, 3))
    assert_close(mine(ours(x, device)), ref(x).detach())
    assert mine.device_ids == ref.device_ids == []
    # (PyTorch's data_parallel needs a CUDA device: on one it gives module(input) on it, as here)
    assert_close(torchweb.nn.parallel.data_parallel(mine.module, ours(x, device)), ref.module(x).detach())


def test_factory_kwargs():
    for nn in (torch.nn, torchweb.nn):
        assert nn.factory_kwargs(None) == {}
        assert nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": 1}}) == {"device": "cpu", "dtype": 1}
        with pytest.raises(TypeError, match="unexpected kwargs"):
            nn.factory_kwargs({"bogus": 1})
        with pytest.raises(TypeError, match="device specified twice, in \\*\\*kwargs and in factory_kwargs"):
            nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"device": "cpu"}})


def test_linear_cross_entropy_options(device):
    o = torchweb.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    r = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    assert repr(o).replace("torchweb", "torch") == repr(r)
    for kw in ({"acc_policy": "fast"}, {"chunking_method": "aspect_ratio:0"}, {"batch_chunk_size": 0},
               {"chunking_method": "bogus"}):
        with pytest.raises(ValueError) as info:
            torch.nn.LinearCrossEntropyOptions(**kw)
        with pytest.raises(ValueError) as mine:
            torchweb.nn.LinearCrossEntropyOptions(**kw)
        assert str(mine.value) == str(info.value)
    x, w, t = make((5, 4)), make((7, 4)), torch.tensor([0, 3, 6, 1, 2])
    e = TF.linear_cross_entropy(x, w, t, options=r)
    g = WF.linear_cross_entropy(ours(x, device), ours(w, device), ours(t, device), options=o)
    assert_close(g, e, rtol=1e-5, atol=1e-5)


# -- nn.utils.stateless.functional_call -----------------------------------------------------------
def _mlp(nn):
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 2))


def test_functional_call(device):
    ref = _mlp(torch.nn).eval()
    mine = _mlp(torchweb.nn).to(device).eval()
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    new = {"0.weight": make((4, 3)), "3.bias": make((2,)), "1.running_mean": make((4,))}
    t_new = {k: v.clone().requires_grad_(k != "1.running_mean") for k, v in new.items()}
    w_new = {k: ours(v, device, requires_grad=k != "1.running_mean") for k, v in new.items()}
    x = make((5, 3))
    with pytest.warns(FutureWarning):
        g = torchweb.nn.utils.stateless.functional_call(mine, w_new, (ours(x, device),))
    with pytest.warns(FutureWarning):
        e = torch.nn.utils.stateless.functional_call(ref, t_new, (x,))
    assert_close(g, e.detach(), rtol=1e-5, atol=1e-5)
    e.sum().backward()
    g.sum().backward()
    for k in ("0.weight", "3.bias"):
        assert_close(w_new[k].grad, t_new[k].grad, rtol=1e-5, atol=1e-5)
    # the module's own tensors are back, untouched; those not replaced got their gradients
    for (k, a), (_, b) in zip(mine.state_dict().items(), ref.state_dict().items()):
        assert_close(a, b)
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert (a.grad is None) == (b.grad is None), k
        if b.grad is not None:
            assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-5)
    assert type(mine[0].weight) is torchweb.nn.Parameter
    # args as one tensor, kwargs
    g2 = torchweb.nn.utils.stateless._functional_call(mine[3], {"weight": ours(make((2, 4)), device)},
                                                       kwargs={"input": ours(make((1, 4)), device)})
    assert tuple(g2.shape) == (1, 2)


def test_functional_call_strict_and_tied(device):
    for nn, stateless, conv in ((torch.nn, torch.nn.utils.stateless, lambda t: t),
                                (torchweb.nn, torchweb.nn.utils.stateless, lambda t: ours(t, device))):
        dev = {} if nn is torch.nn else {"device": device}
        m = nn.Linear(2, 2, **dev)
        with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'foo'.\n\tMissing key\\(s\\): 'bias'."):
            stateless._functional_call(m, {"weight": conv(make((2, 2))), "foo": conv(make((2,)))},
                                       (conv(make((1, 2))),), strict=True)
        tied = nn.Sequential(nn.Linear(2, 2, bias=False, **dev), nn.Linear(2, 2, bias=False, **dev))
        tied[1].weight = tied[0].weight
        w = conv(torch.eye(2))
        x = conv(torch.tensor([[1.0, 2.0]]))
        out = stateless._functional_call(tied, {"0.weight": w}, (x,))
        assert out.tolist() == [[1.0, 2.0]]                       # the tied 1.weight took w too
        with pytest.raises(ValueError, match="which are tied"):
            stateless._functional_call(tied, {"0.weight": w, "1.weight": conv(torch.zeros(2, 2))}, (x,))
        out2 = stateless._functional_call(tied, {"0.weight": w}, (x,), tie_weights=False)
        assert out2.tolist() != [[1.0, 2.0]]
    with pytest.raises(RuntimeError, match="can't be used with nn.DataParallel"):
        torchweb.nn.utils.stateless._functional_call(torchweb.nn.DataParallel(torchweb.nn.Linear(2, 2)), {}, ())


def test_named_member_accessor(device):
    from torchweb.nn.utils._named_member_accessor import NamedMemberAccessor
    m = _mlp(torchweb.nn).to(device)
    acc = NamedMemberAccessor(m)
    w = acc.get_tensor("0.weight")
    assert w is m[0].weight and acc.get_submodule("3") is m[3]
    new = ours(make((4, 3)), device)
    old = acc.swap_tensor("0.weight", new)
    assert old is w and m[0].weight is new
    assert acc.check_keys(["0.weight", "nope"])[1] == ["nope"]
    with pytest.raises(AttributeError, match="Linear has no attribute `0.nope`"):
        acc.get_tensor("0.nope")
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): '0.nope'."):
        acc.swap_tensors_dict({"0.nope": new})


# -- F.grouped_mm ---------------------------------------------------------------------------------
@pytest.mark.parametrize("a_shape,b_shape,offs", [
    ((6, 8), (2, 8, 4), [2, 5]),           # rows of a by group (row 5 past the last group)
    ((6, 8), (3, 8, 4), [0, 3, 6]),        # an empty group
    ((3, 8), (2, 8, 12), None),            # placeholder replaced below
    ((2, 3, 8), (8, 12), [4, 8]),          # columns of b by group
    ((3, 8), (8, 4), [4, 8]),              # K by group
    ((2, 3, 8), (2, 8, 4), None),          # bmm
])
def test_grouped_mm(device, a_shape, b_shape, offs):
    if a_shape == (3, 8) and offs is None:
        a_shape, b_shape, offs = (4, 8), (1, 8, 4), [4]
    a, b = make(a_shape), make(b_shape)
    o = torch.tensor(offs, dtype=torch.int32) if offs is not None else None
    ta, tb = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    wa, wb = ours(a, device, requires_grad=True), ours(b, device, requires_grad=True)
    e = TF.grouped_mm(ta, tb, offs=o)
    g = WF.grouped_mm(wa, wb, offs=ours(o, device) if o is not None else None)
    # PyTorch leaves what lies past the last offset unset: compare the groups' part
    keep = [slice(None)] * e.dim()
    if offs is not None and len(b_shape) == 3 and len(a_shape) == 2:
        keep[0] = slice(0, offs[-1])
    if offs is not None and len(a_shape) == 3:
        keep[1] = slice(0, offs[-1])
    keep = tuple(keep)
    assert tuple(g.shape) == tuple(e.shape)
    assert_close(g[keep], e[keep].detach(), rtol=1e-5, atol=1e-5)
    up = torch.zeros(e.shape)
    up[keep] = make(tuple(e[keep].shape))
    e.backward(up)
    g.backward(ours(up, device))
    ka = list(keep)[:a.dim()] if len(a_shape) == 2 and len(b_shape) == 3 else [slice(None)] * a.dim()
    assert_close(wa.grad[tuple(ka)], ta.grad[tuple(ka)], rtol=1e-4, atol=1e-5)
    if not (len(a_shape) == 3 and len(b_shape) == 2):
        assert_close(wb.grad, tb.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("args,kw", [
    (((6, 8), (2, 8, 4)), {}),
    (((2, 3, 8), (2, 8, 4)), {"offs": [2, 5]}),
    (((6, 8), (2, 7, 4)), {"offs": [2, 5]}),
    (((6, 8), (3, 8, 4)), {"offs": [2, 5]}),
    (((6,), (3, 8, 4)), {"offs": [2, 5]}),
    (((6, 8), (2, 8, 4)), {"offs": [2, 5], "bias": True}),
    (((6, 8), (2, 8, 4)), {"offs": [2, 5], "long_offs": True}),
])
def test_grouped_mm_errors(device, args, kw):
    a, b = make(args[0]), make(args[1])
    offs = None
    if "offs" in kw:
        offs = torch.tensor(kw["offs"], dtype=torch.int64 if kw.get("long_offs") else torch.int32)
    bias = make((4,)) if kw.get("bias") else None
    with pytest.raises(RuntimeError) as info:
        TF.grouped_mm(a, b, offs=offs, bias=bias)
    with pytest.raises(RuntimeError) as mine:
        WF.grouped_mm(ours(a, device), ours(b, device), offs=ours(offs, device) if offs is not None else None,
                      bias=ours(bias, device) if bias is not None else None)
    assert str(mine.value) == str(info.value)
