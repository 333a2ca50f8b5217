"""Matmul epilogues (issue 21, item 2): a float32 matmul is deferred (lazy/kernel_edges.py) and
the elementwise ops recorded after it (bias, activation, scaling, residual) are stored by its
kernel (backends/webgpu/kernels/matmul_epilogue.py): one dispatch for linear + bias + GELU.
Each case against PyTorch on both devices; the dispatch counts on webgpu."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours
from torchweb.backends.webgpu.kernels import matmul_tiles

F = torch.nn.functional


@pytest.fixture(autouse=True)
def _epilogues_on(monkeypatch):
    """The epilogues are off by default (backends/webgpu/backend.py says why): on here, with
    what kernel_edges learned per signature forgotten before and after."""
    from torchweb.backends.webgpu import backend
    from torchweb.lazy import kernel_edges
    monkeypatch.setattr(backend, "MATMUL_EPILOGUE", True)
    kernel_edges.forget_signatures()
    yield
    kernel_edges.forget_signatures()


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + 7 * len(shape) + sum(shape))
    return torch.randn(*shape, generator=g)


def _ours(t, device, grad=False):
    u = fast_ours(t, device)
    return u.requires_grad_() if grad else u


ACTS = {"gelu": (F.gelu, torchweb.nn.functional.gelu), "relu": (F.relu, torchweb.nn.functional.relu),
        "tanh": (torch.tanh, torchweb.tanh), "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                                                      lambda x: torchweb.nn.functional.gelu(x, approximate="tanh"))}
SHAPES = [(5, 7, 3), (64, 96, 80), (2, 33, 48, 40), (300, 384, 200)]   # [*batch, M], K, N


@pytest.mark.parametrize("act", sorted(ACTS))
@pytest.mark.parametrize("shape", SHAPES)
def test_linear_bias_activation_forward_backward(device, act, shape):
    *lead, K, N = shape
    x, w, b, g = _rand(*lead, K), _rand(N, K, seed=1), _rand(N, seed=2), _rand(*lead, N, seed=3)
    ref_f, our_f = ACTS[act]
    xs, ws, bs = (t.clone().requires_grad_() for t in (x, w, b))
    ref = ref_f(F.linear(xs, ws, bs))
    ref.backward(g)
    xo, wo, bo = (_ours(t, device, True) for t in (x, w, b))
    out = our_f(torchweb.nn.functional.linear(xo, wo, bo))
    out.backward(_ours(g, device))
    assert_close(out, ref.detach(), rtol=1e-4, atol=1e-4)
    for u, t in zip((xo, wo, bo), (xs, ws, bs)):
        assert_close(u.grad, t.grad, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape", SHAPES)
def test_projection_residual_and_scale(device, shape):
    *lead, K, N = shape
    x, w, r = _rand(*lead, K), _rand(K, N, seed=1), _rand(*lead, N, seed=2)
    ref = r + (x @ w) * 0.125
    out = _ours(r, device) + (_ours(x, device) @ _ours(w, device)) * 0.125
    assert_close(out, ref, rtol=1e-4, atol=1e-4)


def test_broadcast_bias_non_contiguous_and_batched_operands(device):
    a = _rand(3, 40, 24).transpose(1, 2)            # [3, 24, 40], transposed
    b = _rand(40, 3, 36, seed=1).permute(1, 0, 2)   # [3, 40, 36], permuted
    col = _rand(24, 1, seed=2)                      # broadcast along columns
    row = _rand(1, 1, 36, seed=3)                   # and along rows and the batch
    ref = torch.sigmoid(torch.bmm(a, b) + col) * row - 1.5
    out = torchweb.sigmoid(torchweb.bmm(_ours(a, device), _ours(b, device)) + _ours(col, device)) \
        * _ours(row, device) - 1.5
    assert_close(out, ref, rtol=1e-4, atol=1e-5)
    # the same expression over a product with a broadcast batch (b a matrix for every entry)
    w = _rand(40, 36, seed=4)
    ref = F.relu(torch.matmul(a, w) - col)
    assert_close(torchweb.nn.functional.relu(torchweb.matmul(_ours(a, device), _ours(w, device)) - _ours(col, device)),
                 ref, rtol=1e-4, atol=1e-5)


def test_two_products_in_one_expression_and_reads_of_each(device):
    x, w1, w2 = _rand(20, 16), _rand(16, 12, seed=1), _rand(16, 12, seed=2)
    p1, p2 = x @ w1, x @ w2
    ref = torch.tanh(p1) * p2
    o1 = _ours(x, device) @ _ours(w1, device)
    o2 = _ours(x, device) @ _ours(w2, device)
    out = torchweb.tanh(o1) * o2
    assert_close(out, ref, rtol=1e-4, atol=1e-5)
    assert_close(o1, p1, rtol=1e-4, atol=1e-5)   # (the products themselves still readable)
    assert_close(o2, p2, rtol=1e-4, atol=1e-5)


def test_pre_activation_read_after_the_activation(device):
    x, w, b = _rand(33, 24), _rand(24, 40, seed=1), _rand(40, seed=2)
    h = _ours(x, device) @ _ours(w, device) + _ours(b, device)
    y = torchweb.nn.functional.gelu(h)
    z = y @ _ours(w.T.contiguous(), device)   # (y written, h still pending)
    ref_h = x @ w + b
    assert_close(z, F.gelu(ref_h) @ w.T, rtol=1e-4, atol=1e-4)
    assert_close(h, ref_h, rtol=1e-4, atol=1e-5)
    assert_close(y, F.gelu(ref_h), rtol=1e-4, atol=1e-5)


def test_out_of_an_expression_over_an_operand(device):
    # out= one of the product's operands: the product may not be stored over what it reads
    a, b = _rand(16, 16), _rand(16, 16, seed=1)
    ours_a = _ours(a, device)
    torchweb.add(ours_a @ _ours(b, device), 1.0, out=ours_a)
    assert_close(ours_a, a @ b + 1.0, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float16])
def test_other_dtypes_run_as_before(device, dtype):
    # only float32 products are deferred; the rest run at once, results as PyTorch's
    a, b = (_rand(9, 12) * 4).to(dtype), (_rand(12, 7, seed=5) * 4).to(dtype)
    ref = a @ b + 2
    out = _ours(a, device) @ _ours(b, device) + 2
    assert out._storage.pending is None
    assert_close(out, ref, rtol=1e-2 if dtype is torch.float16 else 0, atol=1e-1 if dtype is torch.float16 else 0)


def test_non_fusable_consumer(device):
    # a reduction and a view that is not the product's whole: the product is written first
    x, w = _rand(10, 8), _rand(8, 6, seed=1)
    p = _ours(x, device) @ _ours(w, device)
    assert_close(p.sum(dim=0), (x @ w).sum(dim=0), rtol=1e-4, atol=1e-4)
    q = _ours(x, device) @ _ours(w, device)
    assert_close(q[:, 1:4] * 2, (x @ w)[:, 1:4] * 2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("variant,K", [(None, 48), ("t64x64_k16_db", 48), ("t64x64_k16_db_split", 1024)])
def test_linear_bias_gelu_is_one_dispatch(dispatches, variant, K):
    # (split K: the slices, then their sum, which stores the epilogue)
    x, w, b = _rand(4, 16, K), _rand(96, K, seed=1), _rand(96, seed=2)
    xo, wo, bo = (_ours(t, "webgpu") for t in (x, w, b))
    torchweb.webgpu.synchronize()
    matmul_tiles.FORCED = variant
    try:
        dispatches[0] = 0
        with torchweb.no_grad():
            out = torchweb.nn.functional.gelu(torchweb.nn.functional.linear(xo, wo, bo))
        torchweb.webgpu.synchronize()
        assert dispatches[0] == (2 if variant and "split" in variant else 1)
    finally:
        matmul_tiles.FORCED = None
    assert_close(out, F.gelu(F.linear(x, w, b)), rtol=1e-4, atol=1e-4)


def test_residual_projection_is_one_dispatch(dispatches):
    x, w, b, r = _rand(2, 8, 32), _rand(32, 32, seed=1), _rand(32, seed=2), _rand(2, 8, 32, seed=3)
    xo, wo, bo, ro = (_ours(t, "webgpu") for t in (x, w, b, r))
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    with torchweb.no_grad():
        out = ro + torchweb.nn.functional.linear(xo, wo, bo)
        torchweb.webgpu.synchronize()
    assert dispatches[0] == 1
    assert_close(out, r + F.linear(x, w, b), rtol=1e-4, atol=1e-4)


def test_compiled_linear_gelu_matches_eager():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(24, 48), torch.nn.GELU(), torch.nn.Linear(48, 8))
    model = torchweb.nn.Sequential(torchweb.nn.Linear(24, 48), torchweb.nn.GELU(), torchweb.nn.Linear(48, 8)).to("webgpu")
    with torchweb.no_grad():
        for p, q in zip(model.parameters(), ref.parameters()):
            p.copy_(fast_ours(q.detach(), "webgpu"))
    opt = torchweb.optim.SGD(model.parameters(), lr=0.1)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    compiled = torchweb.compile(step)
    for i in range(4):
        x, y = _rand(16, 24, seed=10 + i), _rand(16, 8, seed=20 + i)
        ropt.zero_grad()
        rl = ((ref(x) - y) ** 2).mean()
        rl.backward()
        ropt.step()
        loss = compiled(fast_ours(x, "webgpu"), fast_ours(y, "webgpu"))
        assert_close(loss, rl.detach(), rtol=1e-4, atol=1e-5)
    assert compiled.compile_stats["replays"] >= 1
    for p, q in zip(model.parameters(), ref.parameters()):
        assert_close(p, q.detach(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("together", [False, True])
def test_pre_activation_is_stored_by_the_same_kernel(dispatches, together):
    # gelu(h) written while h is still pending (autograd saves it): one kernel stores both,
    # so reading h later runs no second matmul; together: both realized by one synchronize
    x, w, b = _rand(24, 40), _rand(40, 56, seed=1), _rand(56, seed=2)
    xo, wo, bo = (_ours(t, "webgpu") for t in (x, w, b))
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    with torchweb.no_grad():
        h = xo @ wo + bo
        y = torchweb.nn.functional.gelu(h)
        if together:
            torchweb.webgpu.synchronize()
        else:
            y._storage.buffer_for_read()
        assert h._storage.pending is None
    assert dispatches[0] == 1
    assert_close(y, F.gelu(x @ w + b), rtol=1e-4, atol=1e-4)
    assert_close(h, x @ w + b, rtol=1e-4, atol=1e-4)
    assert dispatches[0] == 1


def test_tracked_linear_over_3d_input_stores_gelu(dispatches):
    # the product of a linear layer recorded for autograd ([B*T, N], seen as [B, T, N]) is
    # pending in its readers' shape: GELU, and the pre-activation it saves, one dispatch
    x, w, g = _rand(2, 8, 24), _rand(40, 24, seed=1), _rand(2, 8, 40, seed=2)
    xo, wo = _ours(x, "webgpu", True), _ours(w, "webgpu", True)
    torchweb.webgpu.synchronize()
    dispatches[0] = 0
    out = torchweb.nn.functional.gelu(torchweb.nn.functional.linear(xo, wo))
    torchweb.webgpu.synchronize()
    assert dispatches[0] == 1
    xs, ws = x.clone().requires_grad_(), w.clone().requires_grad_()
    ref = F.gelu(F.linear(xs, ws))
    ref.backward(g)
    out.backward(_ours(g, "webgpu"))
    assert_close(out, ref.detach(), rtol=1e-4, atol=1e-4)
    assert_close(xo.grad, xs.grad, rtol=1e-4, atol=1e-4)
    assert_close(wo.grad, ws.grad, rtol=1e-4, atol=1e-4)


def test_products_only_ever_realized_alone_run_at_once():
    # a signature whose products were realized with nothing fused into them (read by a
    # reduction) is no longer deferred; another signature still is; the values stay PyTorch's
    from torchweb.lazy import kernel_edges
    w = _rand(13, 9, seed=1)
    wo = _ours(w, "webgpu")
    for k in range(kernel_edges.BARE_AFTER + 1):
        x = _rand(11, 13, seed=10 + k)
        p = _ours(x, "webgpu") @ wo
        assert (p._storage.pending is None) == (k == kernel_edges.BARE_AFTER)
        assert_close(p.sum(dim=0), (x @ w).sum(dim=0), rtol=1e-4, atol=1e-4)
    x = _rand(11, 14, seed=3)
    q = _ours(x, "webgpu") @ _ours(_rand(14, 9, seed=4), "webgpu")
    assert q._storage.pending is not None
    assert_close(q * 2, (x @ _rand(14, 9, seed=4)) * 2, rtol=1e-4, atol=1e-4)
