"""The lazy layer's fusing scope (lazy/scope.py) and its traced values (lazy/traced.py): an
update written with tensor methods, run on the values bind() gives, is one kernel that writes
every bound tensor it changed; each method gives PyTorch's numbers; what cannot be traced is
handed back and runs op by op; pending values before the scope are taken in or kept. On both
devices, against PyTorch."""

import pytest
import torch

import torchweb
from torchweb.lazy import fusing
from oracle import ours, theirs


def _tensors(device, n=3, shape=(4, 5)):
    g = torch.Generator().manual_seed(3)
    ts = [torch.rand(*shape, generator=g) + 0.1 for _ in range(n)]   # (positive: sqrt of them)
    return ts, [ours(t, device) for t in ts]


def _step(a, b, c):
    """A step in PyTorch's single-tensor style: in place, fresh temporaries, composites."""
    b.lerp_(a, 0.1)
    c.mul_(0.9).addcmul_(a, a, value=0.1)
    denom = (c.sqrt() / 0.7).add_(1e-3)
    a.addcdiv_(b, denom, value=-0.01)
    a.add_(b, alpha=0.5)


def _same(a, b):
    torch.testing.assert_close(theirs(a), b, rtol=1e-5, atol=1e-6)


def _traced(ws, body, *extra):
    """body(*values, *extra) run on ws bound to a scope (or on ws where bind refuses them);
    returns what bind gave."""
    scope = fusing()
    with torchweb.no_grad():
        values = scope.bind(tuple(ws))
        body(*(ws if values is None else values), *extra)
        scope.run()
    return values


class _Dispatches:
    """The webgpu dispatches recorded inside the block (None on the cpu device)."""

    def __init__(self, device):
        self.device, self.count = device, None

    def __enter__(self):
        if self.device == "webgpu":
            from torchweb.backends.webgpu import runtime as RT
            torchweb.webgpu.synchronize()
            self.rt, self.RT = RT.get_runtime(), RT
            self.saved, RT.FLUSH_AFTER_S = RT.FLUSH_AFTER_S, float("inf")
            self.before = self.rt.stream.dispatches
        return self

    def __exit__(self, *exc):
        if self.device == "webgpu":
            self.count = self.rt.stream.dispatches - self.before
            self.RT.FLUSH_AFTER_S = self.saved


def test_an_update_is_one_kernel_and_matches_pytorch(device):
    ts, ws = _tensors(device)
    _step(*ts)
    with _Dispatches(device) as d:
        values = _traced(ws, _step)
    assert all(type(v).__name__ == "Value" for v in values)
    if device == "webgpu":
        assert d.count == 1   # (the temporary denom is a value of the kernel: never written)
    for w, t in zip(ws, ts):
        _same(w, t)


def test_versions_go_up_for_what_was_written(device):
    ts, ws = _tensors(device)
    before = [w._version for w in ws]
    _traced(ws, lambda a, b, c: b.mul_(2.0))
    assert [w._version - v for w, v in zip(ws, before)] == [0, 1, 0]


# each method of a Value against the same method of a PyTorch tensor: (name, body(a, b, c))
METHODS = [
    ("add number", lambda a, b, c: a.copy_(b.add(0.25))),
    ("add tensor alpha", lambda a, b, c: a.copy_(b.add(c, alpha=-0.5))),
    ("add number alpha", lambda a, b, c: a.copy_(b.add(3.0, alpha=0.5))),
    ("sub", lambda a, b, c: a.copy_(b.sub(c))),
    ("sub alpha", lambda a, b, c: a.copy_(b.sub(c, alpha=2.0))),
    ("mul", lambda a, b, c: a.copy_(b.mul(c))),
    ("div", lambda a, b, c: a.copy_(b.div(c))),
    ("maximum", lambda a, b, c: a.copy_(b.maximum(c))),
    ("minimum", lambda a, b, c: a.copy_(b.minimum(c))),
    ("neg abs", lambda a, b, c: a.copy_(b.sub(0.5).neg().abs())),
    ("sqrt square", lambda a, b, c: a.copy_(b.sqrt().square())),
    ("addcmul", lambda a, b, c: a.copy_(a.addcmul(b, c, value=0.3))),
    ("addcdiv", lambda a, b, c: a.copy_(a.addcdiv(b, c, value=-2.0))),
    ("add_ sub_", lambda a, b, c: a.add_(b).sub_(c, alpha=0.25)),
    ("mul_ div_", lambda a, b, c: a.mul_(b).div_(3.0)),
    ("neg_ abs_ sqrt_", lambda a, b, c: a.neg_().abs_().sqrt_()),
    ("addcmul_ one", lambda a, b, c: a.addcmul_(b, c)),
    ("addcdiv_ one", lambda a, b, c: a.addcdiv_(b, c)),
    ("lerp_ small", lambda a, b, c: a.lerp_(b, 0.1)),
    ("lerp_ large", lambda a, b, c: a.lerp_(b, 0.9)),
    ("copy_ number", lambda a, b, c: a.copy_(0.5)),
    ("sign", lambda a, b, c: a.copy_(b.sub(c).sign().mul(c))),
    ("sign_ of zero", lambda a, b, c: a.sub_(a).sign_().add_(b)),
    ("clamp", lambda a, b, c: a.copy_(b.clamp(0.3, 0.6).add(c.clamp(min=0.5)).add(c.clamp(max=0.4)))),
    ("clamp_", lambda a, b, c: a.clamp_(0.2, 0.7)),
    ("operators", lambda a, b, c: a.copy_(-(b + c) * 2.0 - b / c + 1.0 / b - (2.0 - c) + (3.0 * b) + (0.5 + c))),
    ("in place on a temporary", lambda a, b, c: a.copy_(b.add(1.0).sqrt_().mul_(c))),
    ("a value read after it is written", lambda a, b, c: (b.mul_(2.0), a.copy_(b.add(c)))),
]


@pytest.mark.parametrize("name,body", METHODS, ids=[m[0] for m in METHODS])
def test_each_method_matches_pytorch(device, name, body):
    ts, ws = _tensors(device)
    body(*ts)
    _traced(ws, body)
    for w, t in zip(ws, ts):
        _same(w, t)


@pytest.mark.parametrize("case", ["float16", "strided", "other shape", "offset"])
def test_what_cannot_be_traced_is_handed_back_and_runs_op_by_op(device, case):
    ts, ws = _tensors(device)
    if case == "float16":
        ts[2], ws[2] = ts[2].half(), ws[2].half()
    elif case == "strided":
        ts[2], ws[2] = ts[2].t().contiguous().t(), ws[2].t().contiguous().t()
    elif case == "other shape":
        ts[2], ws[2] = torch.rand(5), ours(torch.rand(5), device)
        ts[2] = theirs(ws[2])
    else:
        big_t = torch.rand(21)
        big = ours(big_t, device)
        ts[2], ws[2] = big_t[1:].view(4, 5), big[1:].view(4, 5)

    def body(a, b, c):
        b.mul_(0.5).add_(c.sum() if case == "other shape" else c)
        a.addcmul_(b, b, value=0.1)

    body(*ts)
    assert _traced(ws, body) is None   # (not traced: the body ran on the tensors)
    for w, t in zip(ws, ts):
        torch.testing.assert_close(theirs(w), t, rtol=2e-3 if case == "float16" else 1e-5, atol=1e-3)


def test_none_stays_none_and_a_tensor_bound_twice_is_one_slot(device):
    ts, ws = _tensors(device)
    a, b, none, a2 = fusing().bind((ws[0], ws[1], None, ws[0]))
    assert none is None and a.slot == a2.slot


def test_pending_values_are_taken_in(device):
    """A new state's lazy zeros and a gradient made by an elementwise op are read inside the
    update's kernel (one dispatch), with their values."""
    ts, ws = _tensors(device)
    grad_t = ts[1] * 3.0 + 1.0
    state_t = torch.zeros_like(ts[0])
    with torchweb.no_grad():
        grad = ws[1] * 3.0 + 1.0
        state = torchweb.zeros_like(ws[0])

    def body(p, g, s):
        s.mul_(0.9).add_(g, alpha=0.1)
        p.add_(s, alpha=-0.5)

    body(ts[0], grad_t, state_t)
    with _Dispatches(device) as d:
        _traced([ws[0], grad, state], body)
    if device == "webgpu":
        assert d.count == 1
    _same(ws[0], ts[0])
    _same(state, state_t)
    _same(grad, grad_t)   # (still pending, or written: its values either way)


def test_a_pending_reader_of_a_written_tensor_sees_its_old_values(device):
    ts, ws = _tensors(device)
    reader_t = ts[0] * 2.0
    with torchweb.no_grad():
        reader = ws[0] * 2.0   # (pending: reads a's buffer, which the update writes)
    _traced(ws, lambda a, b, c: a.add_(b))
    ts[0].add_(ts[1])
    _same(reader, reader_t)
    _same(ws[0], ts[0])


def test_a_pending_operand_past_the_input_limit_is_written_first(device):
    """Pending expressions reading many buffers: those the kernel cannot bind are realized
    before it, and every result still matches."""
    g = torch.Generator().manual_seed(5)
    extra_t = [torch.rand(4, 5, generator=g) for _ in range(6)]
    extra = [ours(t, device) for t in extra_t]
    ts, ws = _tensors(device)
    with torchweb.no_grad():
        grad = extra[0] + extra[1] + extra[2] + extra[3] + extra[4] + extra[5]
    grad_t = extra_t[0] + extra_t[1] + extra_t[2] + extra_t[3] + extra_t[4] + extra_t[5]

    def body(a, b, c, g):
        a.add_(g)
        b.addcmul_(g, c, value=0.5)
        c.lerp_(g, 0.3)

    body(*ts, grad_t)
    _traced(ws + [grad], body)
    for w, t in zip(ws, ts):
        _same(w, t)


def test_empty_tensors(device):
    ws = [ours(torch.zeros(0, 3), device) for _ in range(2)]
    assert _traced(ws, lambda a, b: a.add_(b, alpha=2.0)) is None
    assert list(ws[0].shape) == [0, 3]


def test_a_tensor_operand_is_refused_with_a_clear_error(device):
    ts, ws = _tensors(device)
    scope = fusing()
    a, b, c = scope.bind(tuple(ws))
    with pytest.raises(TypeError, match="numbers and traced values"):
        a.mul_(ours(torch.ones(2), device))


def _counted_update(calls):
    def update(a, b, c, *, w):
        calls.append(w)
        b.lerp_(a, w)
        c.mul_(0.9).addcmul_(a, a, value=w)
        a.addcdiv_(b, c.sqrt().add_(1e-3), value=-0.01)
    return update


def test_update_reuses_the_last_trace_for_the_same_function_and_numbers(device):
    """scope.update over a group's parameters: the update's Python runs once per distinct form
    and numbers (a second parameter reuses the trace), and every parameter gets its own values."""
    calls = []
    fn = _counted_update(calls)
    groups = [_tensors(device, shape=s) for s in [(4, 5), (7,), (4, 5)]]
    scope = fusing()
    with torchweb.no_grad():
        for (ts, ws), w in zip(groups, [0.1, 0.1, 0.3]):
            fn(*ts, w=w)
            scope.update(fn, tuple(ws), w=w)
    assert calls == [0.1, 0.1, 0.1, 0.3, 0.3]   # (PyTorch, ours, PyTorch, ours reused: no call, PyTorch, ours)
    for ts, ws in groups:
        for w, t in zip(ws, ts):
            _same(w, t)


def test_update_runs_op_by_op_where_bind_refuses(device):
    calls = []
    fn = _counted_update(calls)
    ts, ws = _tensors(device)
    ts[1], ws[1] = ts[1].t().contiguous().t(), ws[1].t().contiguous().t()   # (strided: not traced)
    fn(*ts, w=0.2)
    with torchweb.no_grad():
        fusing().update(fn, tuple(ws), w=0.2)
    assert calls == [0.2, 0.2]
    for w, t in zip(ws, ts):
        _same(w, t)


def test_an_update_that_writes_nothing_twice(device):
    """An update whose trace is empty (a zero-step schedule's branch, say) leaves the tensors as
    they are, for the second parameter too (nothing to reuse)."""
    calls = []
    ts, ws = _tensors(device)
    scope = fusing()
    with torchweb.no_grad():
        for _ in range(2):
            scope.update(lambda a, b, c: calls.append(1), tuple(ws))
    assert calls == [1, 1]
    for w, t in zip(ws, ts):
        _same(w, t)
