"""The lazy layer (torchweb/lazy) above the backends: fused elementwise work is deferred and run
by each backend's run_fused on both devices (cpu: numpy; webgpu: one WGSL kernel), with
several pending expressions of one shape in one multi-output kernel, realized explicitly where
bytes are needed, in eager order. Values are compared with PyTorch."""

import ast
import pathlib

import pytest
import torch

import torchweb as tw
from torchweb import lazy

from oracle import assert_close, make, ours


def _pending(t):
    return t._storage.pending is not None


def test_both_devices_defer_fresh_float32_results(device):
    a, b = make((4, 5)), make((5,))
    x, y = ours(a, device), ours(b, device)
    z = ((x * y).exp() - x / (y.abs() + 1)).tanh() * 2 + x[:, :1]
    assert _pending(z)
    want = ((a * b).exp() - a / (b.abs() + 1)).tanh() * 2 + a[:, :1]
    assert_close(z, want, rtol=1e-5, atol=1e-6)
    assert not _pending(z)


@pytest.mark.parametrize("case", ["promotion", "where", "views", "specials", "clamp_alpha"])
def test_fused_values_match_torch(device, case):
    a, b = make((3, 4), special=case == "specials"), make((3, 4))
    i = make((4,), torch.int32, low=-5, high=5)
    x, y, k = ours(a, device), ours(b, device), ours(i, device)
    if case == "promotion":     # an int32 tensor read in float32, a 0-d tensor, Python numbers
        got, want = (x * k + 1.5) / (ours(torch.tensor(2.0), device) + y.abs()), \
                    (a * i + 1.5) / (torch.tensor(2.0) + b.abs())
    elif case == "where":
        got, want = tw.where(x > 0, x * 2, y - 1) * 3, torch.where(a > 0, a * 2, b - 1) * 3
    elif case == "views":       # strided and broadcast leaves
        got, want = (x.t() * y.t()[:, :1] + x[:, 0]).sin(), (a.t() * b.t()[:, :1] + a[:, 0]).sin()
    elif case == "specials":    # NaN, infinities and signed zeros through a chain
        got, want = (x * 2 - 1).exp().sqrt() * -0.0, (a * 2 - 1).exp().sqrt() * -0.0
    else:
        got, want = tw.clamp(tw.add(x, y, alpha=2.5) * 3, -1.5, 2.0) + 1, \
                    torch.clamp(torch.add(a, b, alpha=2.5) * 3, -1.5, 2.0) + 1
    assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_write_after_deferred_read_keeps_eager_order(device):
    a = ours(torch.tensor([1.0, 2.0, 3.0]), device)
    b = a * 10 + 1                 # pending, reads a
    a.add_(100)                    # in place: b is computed from the old a first
    c = a[:2] * 2                  # pending through a view
    a.zero_()
    d = a + 1
    a[1] = 5.0                     # an indexed write (cpu: a host-side write) after a read
    e = a * 1
    a.copy_(tw.full((3,), 7.0, device=device))
    assert b.tolist() == [11.0, 21.0, 31.0]
    assert c.tolist() == [202.0, 204.0]
    assert d.tolist() == [1.0, 1.0, 1.0]
    assert e.tolist() == [0.0, 5.0, 0.0]
    assert a.tolist() == [7.0, 7.0, 7.0]


def test_realize_for_read_and_for_write(device):
    x = ours(torch.tensor([1.0, 2.0]), device)
    y = x * 3                      # pending over x
    z = x + 1                      # another pending reader of x
    lazy.realize_for_read(y._storage)
    assert not _pending(y) and _pending(z)     # a read writes y only
    lazy.realize_for_write(x._storage)         # x about to be written: its readers run now
    assert not _pending(z)
    assert (y.tolist(), z.tolist()) == ([3.0, 6.0], [2.0, 3.0])
    w = x * 5
    lazy.realize_all()
    assert not _pending(w) and w.tolist() == [5.0, 10.0]


def test_multi_output_node_one_kernel_on_webgpu(dispatches):
    a, b = make((256,)), make((256,))
    x, y = ours(a, "webgpu"), ours(b, "webgpu")
    tw.webgpu.synchronize()
    dispatches[0] = 0
    outs = [x * 2 + y, (x - y).exp(), x.abs() * 0.5, y * y + 1]   # four pending readers of x and y
    assert all(map(_pending, outs)) and dispatches[0] == 0
    x.mul_(3)                      # all four run first, as one kernel, on the old x; then mul_
    assert dispatches[0] == 2
    assert_close(outs, [a * 2 + b, (a - b).exp(), a.abs() * 0.5, b * b + 1], rtol=1e-5, atol=1e-5)
    assert_close(x, a * 3)


def test_multi_output_nodes_run_by_both_backends(device):
    """run_fused with several outputs: what realize_all and realize_for_write hand over."""
    a, b = make((2, 3)), make((3,))
    x, y = ours(a, device), ours(b, device)
    outs = [x * y, (x + 1).neg(), x.sigmoid() - y, tw.where(x > y, x, 0.5)]
    lazy.realize_all()
    assert not any(map(_pending, outs))
    assert_close(outs, [a * b, (a + 1).neg(), a.sigmoid() - b, torch.where(a > b, a, 0.5)],
                 rtol=1e-5, atol=1e-6)


def test_multi_output_batches_respect_the_binding_limit(dispatches):
    ts = [make((64,)) for _ in range(10)]
    xs = [ours(t, "webgpu") for t in ts]
    tw.webgpu.synchronize()
    dispatches[0] = 0
    outs = [x * 2 for x in xs]     # ten expressions over ten buffers: 20 buffers in all
    tw.webgpu.synchronize()
    # (8 storage buffers per kernel: 4 expressions with their input each, then 4, then 2)
    assert dispatches[0] == 3
    assert_close(outs, [t * 2 for t in ts])


def test_fused_chain_is_one_dispatch(dispatches):
    a = make((1000,))
    x = ours(a, "webgpu")
    tw.webgpu.synchronize()
    dispatches[0] = 0
    y, want = x, a
    for _ in range(15):
        y, want = (y * 1.01 + 0.01).relu(), (want * 1.01 + 0.01).relu()
    assert dispatches[0] == 0
    assert_close(y, want, rtol=1e-5, atol=1e-6)
    assert dispatches[0] == 1


def test_out_argument_written_directly(device):
    a, b = make((3, 4)), make((3, 4))
    x, y = ours(a, device), ours(b, device)
    out = tw.empty(3, 4, device=device)
    tw.add(x * 2, y, out=out)      # the pending x * 2 + y computed straight into out
    assert_close(out, a * 2 + b)
    tw.mul(out + 1, out, out=out)  # reads out in place while writing it
    assert_close(out, (a * 2 + b + 1) * (a * 2 + b))


def test_reduction_and_matmul_of_pending_inputs(device):
    a, b = make((8, 16)), make((16, 4))
    x, w = ours(a, device), ours(b, device)
    assert_close((x * 2 - 1).sum(1), (a * 2 - 1).sum(1), rtol=1e-5, atol=1e-5)
    assert_close((x.exp() * 0.5).amax(), (a.exp() * 0.5).amax())
    assert_close(torch_softmax := tw.softmax(x * 3, -1), torch.softmax(a * 3, -1))
    assert torch_softmax.shape == (8, 16)
    assert_close((x + 1) @ (w * 2), (a + 1) @ (b * 2), rtol=1e-4, atol=1e-4)


def test_backward_through_fused_chains(device):
    a, b = make((3, 4)), make((4,))
    x, w = ours(a, device, requires_grad=True), ours(b, device, requires_grad=True)
    ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
    ((x * 2 + w).tanh() * x - 1.5 / (w.abs() + 1)).sum().backward()
    ((ta * 2 + tb).tanh() * ta - 1.5 / (tb.abs() + 1)).sum().backward()
    assert_close(x.grad, ta.grad, rtol=1e-5, atol=1e-5)
    assert_close(w.grad, tb.grad, rtol=1e-5, atol=1e-5)


def test_backends_never_import_the_lazy_layer():
    """The layer sits above the backends: they reach it only through backends/pending.py."""
    root = pathlib.Path(tw.__file__).parent / "backends"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
                assert not any(n == "lazy" or n.endswith(".lazy") or "torchweb.lazy" in n for n in names), path
    from torchweb.backends.webgpu.storage import GPUStorage
    assert not hasattr(GPUStorage, "buffer_id")   # no property runs a kernel


def test_saving_a_pending_tensor_writes_its_values(device):
    import io
    a = make((3, 4))
    x = ours(a, device) * 2 + 1    # pending until the file needs its bytes
    assert _pending(x)
    buf = io.BytesIO()
    tw.save({"x": x}, buf)
    buf.seek(0)
    torch.testing.assert_close(torch.load(buf)["x"], a * 2 + 1)
