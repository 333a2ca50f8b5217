"""nn.utils against PyTorch from the same inputs: gradient clipping (total norm and clipped
gradients, every norm type, non-finite norms), parameters <-> vector, and nn.utils.rnn's
padding and packing (data, batch_sizes, indices, gradients through them), errors by type and
message."""

import math

import pytest
import torch

import torchweb
from oracle import assert_close, make, ours, theirs

tu, wu = torch.nn.utils, torchweb.nn.utils
trnn, wrnn = torch.nn.utils.rnn, torchweb.nn.utils.rnn


def _params(device, shapes=((3, 4), (5,), (2, 2, 2)), scale=1.0, grads=True):
    """The same parameters (with .grad) in both libraries."""
    tp, wp = [], []
    for s in shapes:
        v = make(s)
        t = v.clone().requires_grad_(True)
        w = ours(v, device, requires_grad=True)
        if grads:
            g = make(s) * scale
            t.grad = g.clone()
            w.grad = ours(g, device)
        tp.append(t)
        wp.append(w)
    return tp, wp


NORM_TYPES = [2.0, 1, 3.0, 0.5, float("inf"), "inf"]


@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(device, norm_type, max_norm):
    tp, wp = _params(device)
    nt = float(norm_type) if norm_type != "inf" else "inf"
    expected = tu.clip_grad_norm_(tp, max_norm, norm_type=nt)
    got = wu.clip_grad_norm_(wp, max_norm, norm_type=nt)
    assert_close(got, expected, rtol=1e-5, atol=1e-6)
    assert got.device == torchweb.device(device)
    for t, w in zip(tp, wp):
        assert_close(w.grad, t.grad, rtol=1e-5, atol=1e-6)
        assert_close(w.detach(), t.detach(), rtol=0, atol=0)   # the parameters themselves untouched


def test_clip_grad_norm_single_tensor_generator_and_missing_grads(device):
    tp, wp = _params(device)
    tp[1].grad, wp[1].grad = None, None
    expected = tu.clip_grad_norm_((p for p in tp), 0.1)
    got = wu.clip_grad_norm_((p for p in wp), 0.1)
    assert_close(got, expected, rtol=1e-5, atol=1e-6)
    for t, w in zip(tp, wp):
        assert (w.grad is None) == (t.grad is None)
        if t.grad is not None:
            assert_close(w.grad, t.grad, rtol=1e-5, atol=1e-6)
    t1, w1 = _params(device, ((4, 4),))
    assert_close(wu.clip_grad_norm_(w1[0], 0.3), tu.clip_grad_norm_(t1[0], 0.3), rtol=1e-5, atol=1e-6)
    assert_close(w1[0].grad, t1[0].grad, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_empty(device):
    assert_close(wu.clip_grad_norm_([], 1.0), tu.clip_grad_norm_([], 1.0))
    _, wp = _params(device, grads=False)
    assert float(wu.clip_grad_norm_(wp, 1.0)) == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        wu.clip_grad_norm_((p for p in []), 1.0)


@pytest.mark.parametrize("special", [float("nan"), float("inf")])
def test_clip_grad_norm_nonfinite(device, special):
    tp, wp = _params(device)
    tp[0].grad[1, 1] = special
    wp[0].grad = ours(tp[0].grad, device)
    with pytest.raises(RuntimeError) as e:
        tu.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as mine:
        wu.clip_grad_norm_(wp, 1.0, error_if_nonfinite=True)
    assert str(mine.value) == str(e.value)
    expected = tu.clip_grad_norm_(tp, 1.0)
    got = wu.clip_grad_norm_(wp, 1.0)
    assert_close(got, expected)
    for t, w in zip(tp, wp):
        assert_close(w.grad, t.grad)


def test_clip_grad_norm_foreach(device):
    for foreach in (True, False):
        tp, wp = _params(device)
        expected = tu.clip_grad_norm_(tp, 1.0, foreach=foreach)
        assert_close(wu.clip_grad_norm_(wp, 1.0, foreach=foreach), expected)
        for t, w in zip(tp, wp):
            assert_close(w.grad, t.grad)
        tu.clip_grad_value_(tp, 0.1, foreach=foreach)
        wu.clip_grad_value_(wp, 0.1, foreach=foreach)
        for t, w in zip(tp, wp):
            assert_close(w.grad, t.grad)


def test_get_total_norm_and_clip_grads_with_norm(device):
    tp, wp = _params(device, scale=4.0)
    tg, wg = [p.grad for p in tp], [p.grad for p in wp]
    for nt in (2.0, 1.0, float("inf")):
        assert_close(wu.get_total_norm(wg, nt), tu.get_total_norm(tg, nt), rtol=1e-5, atol=1e-6)
    total_t = tu.get_total_norm(tg)
    total_w = wu.get_total_norm(wg)
    assert tu.clip_grads_with_norm_(tp, 2.0, total_t) is None
    assert wu.clip_grads_with_norm_(wp, 2.0, total_w) is None
    for t, w in zip(tp, wp):
        assert_close(w.grad, t.grad, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_deprecated(device):
    tp, wp = _params(device)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        got = wu.clip_grad_norm(wp, 1.0)
    assert_close(got, torch.nn.utils.clip_grad_norm_(tp, 1.0))


def test_clip_grad_norm_float16(device):
    # PyTorch keeps the float16 norm; ours must too
    g16 = make((8, 8)).half()
    t = torch.zeros(8, 8, dtype=torch.float16, requires_grad=True)
    t.grad = g16.clone()
    w = torchweb.zeros(8, 8, dtype=torchweb.float16, device=device, requires_grad=True)
    w.grad = ours(g16, device)
    expected = tu.clip_grad_norm_([t], 1.0)
    got = wu.clip_grad_norm_([w], 1.0)
    assert_close(got, expected, rtol=1e-3, atol=1e-3)
    assert_close(w.grad, t.grad, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("clip", [0.5, 2, 0.0])
def test_clip_grad_value(device, clip):
    tp, wp = _params(device)
    tp[2].grad = None
    wp[2].grad = None
    assert tu.clip_grad_value_(tp, clip) is None
    assert wu.clip_grad_value_(wp, clip) is None
    for t, w in zip(tp, wp):
        if t.grad is not None:
            assert_close(w.grad, t.grad, rtol=0, atol=0)
        else:
            assert w.grad is None
    t1, w1 = _params(device, ((5,),))
    tu.clip_grad_value_(t1[0], 0.3)
    wu.clip_grad_value_(w1[0], 0.3)
    assert_close(w1[0].grad, t1[0].grad, rtol=0, atol=0)


def test_parameters_to_vector_and_back(device):
    tp, wp = _params(device, grads=False)
    tv = tu.parameters_to_vector(tp)
    wv = wu.parameters_to_vector(wp)
    assert_close(wv, tv)
    assert wv.grad_fn is not None      # differentiable, as PyTorch's cat
    new = make(tuple(tv.shape))
    tu.vector_to_parameters(new, tp)
    wu.vector_to_parameters(ours(new, device), wp)
    for t, w in zip(tp, wp):
        assert_close(w.detach(), t.detach(), rtol=0, atol=0)
        assert w.requires_grad and w.is_leaf


def test_parameters_module(device):
    m = torchweb.nn.Linear(4, 3).to(device)
    v = wu.parameters_to_vector(m.parameters())
    assert tuple(v.shape) == (15,)
    wu.vector_to_parameters(torchweb.arange(15, dtype=torchweb.float32, device=device), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    assert m.bias.tolist() == [12.0, 13.0, 14.0]


def test_convert_parameters_errors():
    with pytest.raises(TypeError) as e:
        tu.vector_to_parameters([1.0], [torch.zeros(1)])
    with pytest.raises(TypeError) as mine:
        wu.vector_to_parameters([1.0], [torchweb.zeros(1, device="cpu")])
    assert str(mine.value) == str(e.value)
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        wu.parameters_to_vector([torchweb.zeros(2, device="cpu"), torchweb.zeros(2, device="webgpu")])
    with pytest.raises(RuntimeError):
        tu.vector_to_parameters(torch.zeros(3), [torch.zeros(2, 2)])
    with pytest.raises(RuntimeError):
        wu.vector_to_parameters(torchweb.zeros(3, device="cpu"), [torchweb.zeros(2, 2, device="cpu")])


# -- nn.utils.rnn ------------------------------------------------------------------------------
def _seqs(lengths, trailing=(2,), dtype=torch.float32):
    return [make((n,) + trailing, dtype=dtype) for n in lengths]


@pytest.mark.parametrize("lengths", [[4, 2, 3], [1], [3, 3], [5, 1, 1, 4]])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (2, 3)])
def test_pad_sequence(device, lengths, batch_first, side, trailing):
    ts = _seqs(lengths, trailing)
    expected = trnn.pad_sequence(ts, batch_first=batch_first, padding_value=-7.5, padding_side=side)
    got = wrnn.pad_sequence([ours(t, device) for t in ts], batch_first=batch_first, padding_value=-7.5,
                            padding_side=side)
    assert_close(got, expected, rtol=0, atol=0)


def test_pad_sequence_dtypes_and_tensor_input(device):
    ts = [make((3,), dtype=torch.int32), make((2,), dtype=torch.float32)]
    assert_close(wrnn.pad_sequence([ours(t, device) for t in ts], padding_value=4),
                 trnn.pad_sequence(ts, padding_value=4), rtol=0, atol=0)
    x = make((3, 4))
    assert_close(wrnn.pad_sequence(ours(x, device)), trnn.pad_sequence(x), rtol=0, atol=0)
    ts = [make((2, 3)), make((3, 1))]    # copy_'s broadcast of the trailing dims
    assert_close(wrnn.pad_sequence([ours(t, device) for t in ts]), trnn.pad_sequence(ts), rtol=0, atol=0)


def test_pad_sequence_grad(device):
    ts = _seqs([3, 1, 2])
    tl = [t.clone().requires_grad_() for t in ts]
    wl = [ours(t, device, requires_grad=True) for t in ts]
    go = make((3, 3, 2))
    trnn.pad_sequence(tl, padding_side="left").backward(go)
    wrnn.pad_sequence(wl, padding_side="left").backward(ours(go, device))
    for t, w in zip(tl, wl):
        assert_close(w.grad, t.grad, rtol=0, atol=0)


@pytest.mark.parametrize("args,kw", [
    (([],), {}),
    (([(2, 3)],), {"padding_side": "mid"}),
    (([(2, 3), (3, 2)],), {}),
    ((5,), {}),
    (([()],), {}),
])
def test_pad_sequence_errors(args, kw):
    def build(lib):
        seqs = args[0]
        if isinstance(seqs, list):
            return [lib.ones(s) for s in seqs]
        return seqs
    with pytest.raises(Exception) as e:
        trnn.pad_sequence(build(torch), **kw)
    with pytest.raises(type(e.value)) as mine:
        wrnn.pad_sequence([torchweb.ones(s, device="cpu") for s in args[0]] if isinstance(args[0], list) else args[0], **kw)
    if type(e.value) is RuntimeError and "size of tensor" not in str(e.value):
        assert str(mine.value) == str(e.value)


def _same_packed(got, expected, device):
    assert isinstance(got, wrnn.PackedSequence)
    assert_close(got.data, expected.data, rtol=0, atol=0)
    assert got.data.device == torchweb.device(device)
    assert_close(got.batch_sizes, expected.batch_sizes, rtol=0, atol=0)
    assert got.batch_sizes.device == torchweb.device("cpu")
    for g, e in ((got.sorted_indices, expected.sorted_indices), (got.unsorted_indices, expected.unsorted_indices)):
        assert (g is None) == (e is None)
        if e is not None:
            assert_close(g, e, rtol=0, atol=0)


PACK_CASES = [([4, 3, 1], True), ([4, 4, 2, 2], True), ([1, 4, 2], False), ([2, 5, 5, 1, 3], False),
              ([3], True), ([2, 2, 2], False)]


@pytest.mark.parametrize("lengths,enforce", PACK_CASES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_padded_round_trip(device, lengths, enforce, batch_first, as_tensor):
    T, B = max(lengths), len(lengths)
    x = make((B, T, 3) if batch_first else (T, B, 3))
    tl = torch.tensor(lengths) if as_tensor else lengths
    wl = torchweb.tensor(lengths, device="cpu") if as_tensor else lengths
    expected = trnn.pack_padded_sequence(x, tl, batch_first=batch_first, enforce_sorted=enforce)
    got = wrnn.pack_padded_sequence(ours(x, device), wl, batch_first=batch_first, enforce_sorted=enforce)
    _same_packed(got, expected, device)
    for total in (None, T + 2):
        for pv in (0.0, -1.0):
            e_pad, e_len = trnn.pad_packed_sequence(expected, batch_first=batch_first, padding_value=pv,
                                                    total_length=total)
            g_pad, g_len = wrnn.pad_packed_sequence(got, batch_first=batch_first, padding_value=pv,
                                                    total_length=total)
            assert_close(g_pad, e_pad, rtol=0, atol=0)
            assert_close(g_len, e_len, rtol=0, atol=0)
    e_un = trnn.unpad_sequence(e_pad.clone(), e_len, batch_first=batch_first)
    g_un = wrnn.unpad_sequence(g_pad, g_len, batch_first=batch_first)
    assert len(g_un) == len(e_un)
    for g, e in zip(g_un, e_un):
        assert_close(g, e, rtol=0, atol=0)


def test_pack_padded_grad(device):
    x = make((4, 3, 2))
    xt = x.clone().requires_grad_()
    xw = ours(x, device, requires_grad=True)
    pt = trnn.pack_padded_sequence(xt, [2, 4, 1], enforce_sorted=False)
    pw = wrnn.pack_padded_sequence(xw, [2, 4, 1], enforce_sorted=False)
    yt, _ = trnn.pad_packed_sequence(pt, batch_first=True, total_length=5)
    yw, _ = wrnn.pad_packed_sequence(pw, batch_first=True, total_length=5)
    go = make((3, 5, 2))
    (yt * go).sum().backward()
    (yw * ours(go, device)).sum().backward()
    assert_close(xw.grad, xt.grad, rtol=0, atol=0)


@pytest.mark.parametrize("lengths,enforce", [([3, 2, 1], True), ([1, 3, 2], False), ([2, 2], True)])
def test_pack_unpack_sequence(device, lengths, enforce):
    ts = _seqs(lengths, (2,))
    expected = trnn.pack_sequence(ts, enforce_sorted=enforce)
    got = wrnn.pack_sequence([ours(t, device) for t in ts], enforce_sorted=enforce)
    _same_packed(got, expected, device)
    e_list = trnn.unpack_sequence(expected)
    g_list = wrnn.unpack_sequence(got)
    for g, e in zip(g_list, e_list):
        assert_close(g, e, rtol=0, atol=0)


@pytest.mark.parametrize("x_shape,lengths", [
    ((0, 3), [1, 1, 1]),             # empty
    ((4, 3, 2), [4, 3]),             # too few lengths
    ((4, 3, 2), [4, 3, 0]),          # a zero length
    ((4, 3, 2), [4, 3, -1]),
    ((4, 3, 2), [3, 4, 1]),          # not sorted
    ((4, 3, 2), [5, 4, 1]),          # past T: PyTorch packs what is there
    ((4,), [4]),
])
def test_pack_padded_errors(device, x_shape, lengths):
    x = make(x_shape)
    try:
        expected = trnn.pack_padded_sequence(x, lengths)
    except Exception as e:
        with pytest.raises(type(e)) as mine:
            wrnn.pack_padded_sequence(ours(x, device), lengths)
        if type(e) is RuntimeError:
            assert str(mine.value) == str(e)
        return
    _same_packed(wrnn.pack_padded_sequence(ours(x, device), lengths), expected, device)


def test_packed_sequence_api(device):
    x = make((4, 3, 2))
    p = wrnn.pack_padded_sequence(ours(x, device), [4, 2, 3], enforce_sorted=False)
    e = trnn.pack_padded_sequence(x, [4, 2, 3], enforce_sorted=False)
    data, batch_sizes, si, ui = p          # a namedtuple
    assert p._fields == e._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert p.to(torchweb.float32) is p and p.float() is p
    h = p.half()
    assert h.data.dtype == torchweb.float16 and h.batch_sizes is p.batch_sizes
    other = "webgpu" if device == "cpu" else "cpu"
    q = p.to(other)
    assert q.data.device == torchweb.device(other) and q.sorted_indices.device == torchweb.device(other)
    assert q.batch_sizes.device == torchweb.device("cpu")
    assert not p.is_cuda
    r = wrnn.PackedSequence(data, batch_sizes, si)
    assert_close(r.unsorted_indices, e.unsorted_indices, rtol=0, atol=0)
    r2 = wrnn.PackedSequence((data, batch_sizes))
    assert r2.sorted_indices is None and r2.unsorted_indices is None
    with pytest.raises(AssertionError, match="Expected data to be a list or tuple of length 2"):
        wrnn.PackedSequence(data)
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        wrnn.PackedSequence(data, torchweb.tensor([2, 1], device="webgpu"))
    assert_close(wrnn.invert_permutation(ours(torch.tensor([2, 0, 3, 1]), device)),
                 trnn.invert_permutation(torch.tensor([2, 0, 3, 1])), rtol=0, atol=0)
    assert wrnn.invert_permutation(None) is None


def test_pad_packed_total_length_error(device):
    x = make((4, 3, 2))
    e = trnn.pack_padded_sequence(x, [4, 3, 1])
    p = wrnn.pack_padded_sequence(ours(x, device), [4, 3, 1])
    with pytest.raises(ValueError) as te:
        trnn.pad_packed_sequence(e, total_length=3)
    with pytest.raises(ValueError) as we:
        wrnn.pad_packed_sequence(p, total_length=3)
    assert str(we.value) == str(te.value)


def test_unpad_sequence_errors(device):
    with pytest.raises(ValueError):
        wrnn.unpad_sequence(torchweb.ones(3, 2, device=device), torchweb.tensor([3, 2, 1]))


def test_large_pack(device):
    """A batch past one workgroup row: 300 sequences of up to 40 steps with 8 features."""
    g = torch.Generator().manual_seed(5)
    lengths = sorted(torch.randint(1, 41, (300,), generator=g).tolist(), reverse=True)
    x = make((40, 300, 8))
    expected = trnn.pack_padded_sequence(x, lengths)
    got = wrnn.pack_padded_sequence(ours(x, device), lengths)
    _same_packed(got, expected, device)
    assert_close(wrnn.pad_packed_sequence(got)[0], trnn.pad_packed_sequence(expected)[0], rtol=0, atol=0)


def test_unsorted_ties(device):
    """Past 16 sequences PyTorch's (unstable) sort orders equal lengths its own way; ours keeps
    them in batch order (a stable sort). batch_sizes and the padded round trip are the same."""
    g = torch.Generator().manual_seed(6)
    lengths = torch.randint(1, 6, (40,), generator=g).tolist()
    x = make((5, 40, 3))
    expected = trnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    got = wrnn.pack_padded_sequence(ours(x, device), lengths, enforce_sorted=False)
    assert_close(got.batch_sizes, expected.batch_sizes, rtol=0, atol=0)
    order = sorted(range(40), key=lambda k: -lengths[k])
    assert got.sorted_indices.tolist() == order
    e_pad, e_len = trnn.pad_packed_sequence(expected)
    g_pad, g_len = wrnn.pad_packed_sequence(got)
    assert_close(g_pad, e_pad, rtol=0, atol=0)
    assert_close(g_len, e_len, rtol=0, atol=0)


# -- nn.utils.parametrize and parametrizations ----------------------------------------------------
tP, wP = torch.nn.utils.parametrize, torchweb.nn.utils.parametrize
tPZ, wPZ = torch.nn.utils.parametrizations, torchweb.nn.utils.parametrizations


def _linear_pair(device, i=4, o=3, bias=True):
    """torch and torchweb Linear layers holding the same weights."""
    t = torch.nn.Linear(i, o, bias=bias)
    w = torchweb.nn.Linear(i, o, bias=bias).to(device)
    with torchweb.no_grad():
        w.weight.copy_(ours(t.weight.detach(), device))
        if bias:
            w.bias.copy_(ours(t.bias.detach(), device))
    return t, w


def _sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _scale(lib, k):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * k

        def right_inverse(self, A):
            return A / k
    return Scale()


def _same_state(w_mod, t_mod, **tol):
    ws, ts = w_mod.state_dict(), t_mod.state_dict()
    assert list(ws) == list(ts)
    for k in ts:
        assert_close(ws[k], ts[k], **(tol or {"rtol": 1e-6, "atol": 1e-7}))


def test_register_parametrization(device):
    t, w = _linear_pair(device, 3, 3)
    tP.register_parametrization(t, "weight", _sym(torch))
    wP.register_parametrization(w, "weight", _sym(torchweb))
    assert type(w).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert wP.type_before_parametrizations(w) is torchweb.nn.Linear
    assert wP.is_parametrized(w) and wP.is_parametrized(w, "weight") and not wP.is_parametrized(w, "bias")
    assert_close(w.weight, t.weight.detach())
    _same_state(w, t)
    assert [n for n, _ in w.named_parameters()] == [n for n, _ in t.named_parameters()]
    x = make((2, 3))
    go = make((2, 3))
    (t(x) * go).sum().backward()
    (w(ours(x, device)) * ours(go, device)).sum().backward()
    assert_close(w.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    # a second one chains after the first; assigning goes through the right inverses
    tP.register_parametrization(t, "weight", _scale(torch, 2.0))
    wP.register_parametrization(w, "weight", _scale(torchweb, 2.0))
    assert_close(w.weight, t.weight.detach())
    a = make((3, 3))
    with torch.no_grad():
        t.weight = a
    w.weight = ours(a, device)
    assert_close(w.parametrizations.weight.original, t.parametrizations.weight.original.detach())
    assert_close(w.weight, t.weight.detach())


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(device, leave):
    t, w = _linear_pair(device, 3, 3)
    tP.register_parametrization(t, "weight", _sym(torch))
    wP.register_parametrization(w, "weight", _sym(torchweb))
    tP.remove_parametrizations(t, "weight", leave_parametrized=leave)
    wP.remove_parametrizations(w, "weight", leave_parametrized=leave)
    assert type(w) is torchweb.nn.Linear and not hasattr(w, "parametrizations")
    assert isinstance(w.weight, torchweb.nn.Parameter)
    _same_state(w, t)


def test_cached(device):
    _, w = _linear_pair(device, 3, 3)
    wP.register_parametrization(w, "weight", _sym(torchweb))
    assert w.weight is not w.weight
    with wP.cached():
        a = w.weight
        assert w.weight is a
    assert w.weight is not a


def test_parametrize_errors(device):
    t, w = _linear_pair(device, 3, 2)

    class Shrink:
        def __init__(self, lib):
            class M(lib.nn.Module):
                def forward(self, X):
                    return X[:1]
            self.m = M()

    cases = [
        lambda lib, m: (lib.nn.utils.parametrize.register_parametrization(m, "nope", _sym(lib))),
        lambda lib, m: (lib.nn.utils.parametrize.register_parametrization(m, "weight", Shrink(lib).m)),
        lambda lib, m: (lib.nn.utils.parametrize.remove_parametrizations(m, "weight")),
    ]
    for fn in cases:
        with pytest.raises(Exception) as e:
            fn(torch, t)
        with pytest.raises(type(e.value)) as mine:
            fn(torchweb, w)
        if "Module" not in str(e.value):   # messages naming the module print its repr
            assert str(mine.value) == str(e.value)
    wP.register_parametrization(w, "weight", Shrink(torchweb).m, unsafe=True)
    assert tuple(w.weight.shape) == (1, 3)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm(device, dim):
    t, w = _linear_pair(device)
    tPZ.weight_norm(t, dim=dim)
    wPZ.weight_norm(w, dim=dim)
    _same_state(w, t, rtol=1e-5, atol=1e-6)
    assert_close(w.weight, t.weight.detach())
    x, go = make((2, 4)), make((2, 3))
    (t(x) * go).sum().backward()
    (w(ours(x, device)) * ours(go, device)).sum().backward()
    for k in ("original0", "original1"):
        assert_close(getattr(w.parametrizations.weight, k).grad, getattr(t.parametrizations.weight, k).grad,
                     rtol=1e-4, atol=1e-6)


def test_weight_norm_3d_and_old_keys(device):
    class Holder(torchweb.nn.Module):
        def __init__(self, v):
            super().__init__()
            self.weight = torchweb.nn.Parameter(v)

    class THolder(torch.nn.Module):
        def __init__(self, v):
            super().__init__()
            self.weight = torch.nn.Parameter(v)

    v = make((4, 3, 2))
    for dim in (0, 1, 2):
        t, w = THolder(v.clone()), Holder(ours(v, device))
        tPZ.weight_norm(t, dim=dim)
        wPZ.weight_norm(w, dim=dim)
        _same_state(w, t, rtol=1e-5, atol=1e-6)
        assert_close(w.weight, t.weight.detach())
    # a checkpoint from the old weight_norm (weight_g, weight_v) loads into the new keys
    g, v2 = make((3, 1)), make((3, 4))
    t, w = _linear_pair(device)
    tPZ.weight_norm(t)
    wPZ.weight_norm(w)
    sd_t = {"weight_g": g, "weight_v": v2, "bias": make((3,))}
    t.load_state_dict(sd_t)
    w.load_state_dict({k: ours(x, device) for k, x in sd_t.items()})
    _same_state(w, t)
    assert_close(w.weight, t.weight.detach())


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape,dim", [((3, 4), None), ((5, 2), 1), ((4, 3, 2), None), ((4, 3, 2), 1), ((6,), None)])
def test_spectral_norm(device, training, shape, dim):
    """The same weight and power-iteration vectors (copied from PyTorch's, its random start
    differs) give the same normalized weight and updated vectors."""
    class Holder(torchweb.nn.Module):
        def __init__(self, v):
            super().__init__()
            self.weight = torchweb.nn.Parameter(v)

    class THolder(torch.nn.Module):
        def __init__(self, v):
            super().__init__()
            self.weight = torch.nn.Parameter(v)

    v = make(shape)
    t, w = THolder(v.clone()), Holder(ours(v, device))
    tPZ.spectral_norm(t, dim=dim)
    wPZ.spectral_norm(w, dim=dim)
    assert list(w.state_dict()) == list(t.state_dict())
    if len(shape) > 1:
        sn_t, sn_w = t.parametrizations.weight[0], w.parametrizations.weight[0]
        with torchweb.no_grad():
            sn_w._u.copy_(ours(sn_t._u, device))
            sn_w._v.copy_(ours(sn_t._v, device))
    t.train(training)
    w.train(training)
    assert_close(w.weight, t.weight.detach(), rtol=1e-4, atol=1e-6)
    _same_state(w, t, rtol=1e-4, atol=1e-6)
    go = make(shape)
    (t.weight * go).sum().backward()
    (w.weight * ours(go, device)).sum().backward()
    assert_close(w.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad,
                 rtol=1e-4, atol=1e-5)


def test_spectral_norm_converges(device):
    _, w = _linear_pair(device, 8, 6)
    wPZ.spectral_norm(w, n_power_iterations=5)
    for _ in range(5):
        W = w.weight
    sigma = torch.linalg.matrix_norm(theirs(W.detach()), ord=2).item()
    assert abs(sigma - 1.0) < 1e-3


def test_spectral_norm_errors(device):
    for kw in ({"dim": 2}, {"dim": -3}, {"n_power_iterations": 0}, {"name": "nope"}):
        t, w = _linear_pair(device)
        with pytest.raises(Exception) as e:
            tPZ.spectral_norm(t, **kw)
        with pytest.raises(type(e.value)) as mine:
            wPZ.spectral_norm(w, **kw)
        if "Module" not in str(e.value):
            assert str(mine.value) == str(e.value)
