"""out= of elementwise ops (ops/pointwise_api.py _out): a pending fused result is computed
straight into out's buffer (lazy.write_into, one kernel) when out is laid out as the result;
otherwise (views, other dtypes, aliasing in another layout, autograd) the op runs into a
temporary that is copied. Both against PyTorch."""

import pytest
import torch

import torchweb as tw
from torchweb.backends.webgpu.runtime import get_runtime

from oracle import assert_close, make, ours

DEV = "webgpu"


def _w(t):
    return ours(t, DEV)


def _count_dispatches(monkeypatch):
    rt = get_runtime()
    calls = []
    real = rt.record   # (every kernel's dispatch: a[0] its row's head, [1] the pipeline id)
    monkeypatch.setattr(rt, "record", lambda *a: (calls.append(a[0][1]), real(*a))[1])
    return calls


def _realized(*ts):
    for t in ts:
        t.sum().item()


def test_add_out_is_one_kernel_into_out(monkeypatch):
    a, b = make((1000,)), make((1000,))
    x, y, c = _w(a), _w(b), tw.zeros(1000, device=DEV)
    _realized(x, y, c)
    v0 = c._version
    calls = _count_dispatches(monkeypatch)
    r = tw.add(x, y, out=c)
    want_out = torch.zeros(1000)
    torch_v0 = want_out._version
    torch.add(a, b, out=want_out)
    assert r is c
    assert len(calls) == 1                         # no copy kernel after the op's
    assert c._storage.pending is None              # written now, as eager out= does
    assert c._version - v0 == want_out._version - torch_v0
    assert_close(c, want_out)
    assert len(calls) == 1


BINARY = ["add", "sub", "mul", "div", "maximum", "atan2"]
UNARY = ["exp", "sin", "tanh", "neg", "abs", "sigmoid", "sqrt"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_out_matches_pytorch(name):
    a, b = make((7, 9)), make((7, 9), nonzero=True)
    out, want = tw.empty(7, 9, device=DEV), torch.empty(7, 9)
    getattr(tw, name)(_w(a), _w(b), out=out)
    getattr(torch, name)(a, b, out=want)
    assert_close(out, want)


def test_binary_out_broadcast_and_scalar():
    a, b = make((4, 5)), make((5,))
    out, want = tw.empty(4, 5, device=DEV), torch.empty(4, 5)
    tw.add(_w(a), _w(b), alpha=2.5, out=out)
    torch.add(a, b, alpha=2.5, out=want)
    assert_close(out, want)
    tw.mul(_w(a), 3.0, out=out)
    torch.mul(a, 3.0, out=want)
    assert_close(out, want)


@pytest.mark.parametrize("name", UNARY)
def test_unary_out_matches_pytorch(name):
    a = make((33,), low=0.1, high=3.0)
    out, want = tw.empty(33, device=DEV), torch.empty(33)
    getattr(tw, name)(_w(a), out=out)
    getattr(torch, name)(a, out=want)
    assert_close(out, want)


def test_where_out_matches_pytorch():
    a, b = make((6, 6)), make((6, 6))
    out, want = tw.empty(6, 6, device=DEV), torch.empty(6, 6)
    x = _w(a)
    r = tw.where(x > 0, x, _w(b), out=out)
    torch.where(a > 0, a, b, out=want)
    assert r is out
    assert_close(out, want)


def test_out_is_an_input_same_layout(monkeypatch):
    a, b = make((8, 8)), make((8, 8))
    x, y = _w(a), _w(b)
    _realized(x, y)
    calls = _count_dispatches(monkeypatch)
    tw.add(x, y, out=x)                       # each element read, then written, by one thread
    tw.mul(x, y, out=y)
    assert len(calls) == 2
    want_x = a + b
    want_y = want_x * b
    assert_close(x, want_x)
    assert_close(y, want_y)


def test_out_is_an_input_through_a_fused_expression():
    a, b = make((100,)), make((100,))
    x, y = _w(a), _w(b)
    tw.add(x * 2.0 + 1.0, y, out=x)           # x read inside the inlined x * 2 + 1
    assert_close(x, a * 2.0 + 1.0 + b)


def test_out_is_a_transposed_input_falls_back():
    # PyTorch refuses out overlapping an input in another layout; torchweb computes it as if
    # the input were cloned first (no element read after another thread wrote it)
    a, b = make((5, 5)), make((5, 5))
    x, y = _w(a), _w(b)
    tw.add(x, y, out=x.t())
    assert_close(x, (a + b).t())
    with pytest.raises(RuntimeError, match="single memory location"):
        ac = a.clone()
        torch.add(ac, b, out=ac.t())
    x = _w(a)
    tw.add(x.t(), y, out=x)
    assert_close(x, a.t() + b)


def test_out_views():
    a, b = make((5,)), make((5,))
    x, y = _w(a), _w(b)
    big, want = tw.zeros(12, device=DEV), torch.zeros(12)
    tw.add(x, y, out=big[:5])                 # contiguous prefix: written in place
    torch.add(a, b, out=want[:5])
    tw.mul(x, y, out=big[5:10])               # offset: copied
    torch.mul(a, b, out=want[5:10])
    assert_close(big, want)
    grid, want2 = tw.zeros(5, 3, device=DEV), torch.zeros(5, 3)
    tw.sub(x, y, out=grid[:, 1])              # strided: copied
    torch.sub(a, b, out=want2[:, 1])
    assert_close(grid, want2)


def test_out_of_another_dtype():
    a, b = make((10,)), make((10,))
    out, want = tw.zeros(10, device=DEV), torch.zeros(10)
    tw.gt(_w(a), _w(b), out=out)              # bool result into float32 out
    torch.gt(a, b, out=want)
    assert_close(out, want)
    if "shader-f16" in get_runtime().features:
        h, want_h = tw.zeros(10, dtype=tw.float16, device=DEV), torch.zeros(10, dtype=torch.float16)
        tw.add(_w(a), _w(b), out=h)
        torch.add(a, b, out=want_h)
        assert_close(h, want_h, rtol=1e-3, atol=1e-3)


def test_pending_readers_of_out_see_its_old_values():
    a, b, c0 = make((64,)), make((64,)), make((64,))
    x, y, c = _w(a), _w(b), _w(c0)
    _realized(c)
    p = c * 2.0                                # pending, reads c
    q = c.exp() + 1.0
    assert p._storage.pending is not None
    tw.add(x, y, out=c)
    assert_close(c, a + b)
    assert_close(p, c0 * 2.0)
    assert_close(q, c0.exp() + 1.0)


def test_out_that_is_pending_itself():
    a, b, s = make((64,)), make((64,)), make((64,))
    x, y, z = _w(a), _w(b), _w(s)
    c = z * 3.0                                # pending out
    q = c + 1.0                                # pending, took c's expression into its own
    tw.add(x, y, out=c)
    assert_close(c, a + b)
    assert_close(q, s * 3.0 + 1.0)
    big = z * 2.0                              # pending, only partly overwritten
    tw.mul(x[:32], y[:32], out=big[:32])
    want = s * 2.0
    torch.mul(a[:32], b[:32], out=want[:32])
    assert_close(big, want)


def test_out_requiring_grad_raises_as_pytorch():
    a, b = make((4,)), make((4,))
    o = tw.zeros(4, device=DEV, requires_grad=True)
    with pytest.raises(RuntimeError):
        tw.add(_w(a), _w(b), out=o)
    with pytest.raises(RuntimeError):
        torch.add(a, b, out=torch.zeros(4, requires_grad=True))


def test_out_then_later_ops_read_it():
    a, b = make((300,)), make((300,))
    x, y, c = _w(a), _w(b), tw.empty(300, device=DEV)
    tw.add(x, y, out=c)
    d = c * c + x                              # fused after the direct write
    tw.add(d, 1.0, out=d)
    assert_close(d, (a + b) * (a + b) + a + 1.0)
