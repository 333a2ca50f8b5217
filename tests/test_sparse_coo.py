"""The minimal sparse COO tensor (_sparse_coo.py, torch.sparse) against PyTorch, on both devices:
construction, coalesce, indices/values, to_sparse/to_dense, sparse @ dense with gradients,
torch.sparse.sum/softmax/log_softmax, moves and casts, modules holding one, torch.save/load
both ways, and the refusal of everything else."""

import copy
import io
import pickle
import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, ours

warnings.filterwarnings("ignore", message="Sparse invariant checks")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]
VAL = [3.0, 4.0, 5.0, 1.0, -2.0]


def _pair(device, size=(3, 3), idx=IDX, val=VAL, **kw):
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), size, **kw)
    x = torchweb.sparse_coo_tensor(torchweb.tensor(idx, device=device), torchweb.tensor(val, device=device),
                                   size, **kw)
    return t, x


def _same_sparse(x, t):
    assert x.is_sparse and isinstance(x, torchweb.Tensor)
    assert x.layout is torchweb.sparse_coo
    assert tuple(x.shape) == tuple(t.shape)
    assert (x.sparse_dim(), x.dense_dim(), x._nnz(), x.is_coalesced()) == \
        (t.sparse_dim(), t.dense_dim(), t._nnz(), t.is_coalesced())
    assert_close(x._indices(), t._indices())
    assert_close(x._values(), t._values().detach())


def test_construction_and_metadata(device):
    t, x = _pair(device)
    _same_sparse(x, t)
    assert x.dtype is torchweb.float32 and x.device.type == device
    assert x.dim() == t.dim() and x.numel() == t.numel() and x.stride() == t.stride()
    assert x.is_floating_point() and not x.is_contiguous() and not t.is_contiguous()
    assert x.requires_grad is False and x.is_leaf
    assert repr(x).replace(", device='cpu'", "") == repr(t)
    # size inferred, hybrid (dense dims in the values), dtype and is_coalesced given
    t2 = torch.sparse_coo_tensor(torch.tensor([[0, 4]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    x2 = torchweb.sparse_coo_tensor(torchweb.tensor([[0, 4]], device=device),
                                    torchweb.tensor([[1.0, 2.0], [3.0, 4.0]], device=device))
    _same_sparse(x2, t2)
    t3, x3 = _pair(device, idx=[[0, 1], [1, 2]], val=[1, 2], is_coalesced=True)
    _same_sparse(x3, t3)
    t4 = torch.sparse_coo_tensor(IDX, VAL, (3, 3), dtype=torch.int32)
    x4 = torchweb.sparse_coo_tensor(IDX, VAL, (3, 3), dtype=torchweb.int32, device=device)
    _same_sparse(x4, t4)
    assert x4.device.type == device


def test_construction_errors(device):
    for lib in (torch, torchweb):
        kw = {"device": device} if lib is torchweb else {}
        with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
            lib.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0], (3,), **kw)
        with pytest.raises(RuntimeError, match=r"'len\(size\) == sparse_dim \+ dense_dim' is not satisfied"):
            lib.sparse_coo_tensor([[0, 1], [0, 1]], [1.0, 2.0], (3,), **kw)
        with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 3 but found index 5"):
            lib.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,), check_invariants=True, **kw)


def test_coalesce_indices_values(device):
    t, x = _pair(device)
    for name in ("indices", "values"):
        for thing in (t, x):
            with pytest.raises(RuntimeError, match=f"Cannot get {name} on an uncoalesced tensor, please call .coalesce"):
                getattr(thing, name)()
    c, y = t.coalesce(), x.coalesce()
    _same_sparse(y, c)
    assert_close(y.indices(), c.indices())
    assert_close(y.values(), c.values())
    assert y.coalesce() is y
    assert_close(x.to_dense(), t.to_dense())
    assert_close(y.to_dense(), c.to_dense())
    # hybrid: duplicates summed row-wise
    th = torch.sparse_coo_tensor(torch.tensor([[1, 0, 1]]), torch.tensor([[1.0, 2], [3, 4], [5, 6]]), (2, 2))
    xh = torchweb.sparse_coo_tensor(torchweb.tensor([[1, 0, 1]], device=device),
                                    torchweb.tensor([[1.0, 2], [3, 4], [5, 6]], device=device), (2, 2))
    _same_sparse(xh.coalesce(), th.coalesce())
    assert_close(xh.to_dense(), th.to_dense())
    # empty
    te = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (2, 3))
    xe = torchweb.sparse_coo_tensor(torchweb.zeros(2, 0, dtype=torchweb.int64, device=device),
                                    torchweb.zeros(0, device=device), (2, 3))
    _same_sparse(xe.coalesce(), te.coalesce())
    assert_close(xe.to_dense(), te.to_dense())


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_and_back(device, sparse_dim):
    t = torch.tensor([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [-2.0, 0.0, 3.0]])
    x = ours(t, device)
    args = () if sparse_dim is None else (sparse_dim,)
    r, y = t.to_sparse(*args), x.to_sparse(*args)
    _same_sparse(y, r)
    assert_close(y.to_dense(), t)
    _same_sparse(x.to_sparse_coo(), t.to_sparse_coo())
    _same_sparse(x.to_sparse(layout=torchweb.sparse_coo), t.to_sparse(layout=torch.sparse_coo))
    assert y.to_sparse() is y and x.to_dense() is x
    assert (x.sparse_dim(), x.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    for thing in (t, x):
        with pytest.raises(RuntimeError, match="indices expected sparse coordinate tensor layout but got Strided"):
            thing.indices()
        with pytest.raises(RuntimeError, match="coalesce expected sparse coordinate tensor layout"):
            thing.coalesce()
        with pytest.raises(RuntimeError, match="is_coalesced expected sparse coordinate tensor layout"):
            thing.is_coalesced()
    with pytest.raises(NotImplementedError, match="_nnz"):
        x._nnz()
    with pytest.raises(NotImplementedError, match="sparse_csr"):
        x.to_sparse(layout=torchweb.sparse_csr)


def test_to_sparse_gradient(device):
    t = torch.tensor([[0.0, 1.5], [2.0, 0.0]], requires_grad=True)
    x = ours(t.detach(), device, requires_grad=True)
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    (t * 2).to_sparse().to_dense().mul(w).sum().backward()
    (x * 2).to_sparse().to_dense().mul(ours(w, device)).sum().backward()
    assert_close(x.grad, t.grad)


@pytest.mark.parametrize("form", ["sparse.mm", "mm", "spmm", "matmul", "@", "method"])
def test_sparse_times_dense_with_gradients(device, form):
    t, x = _pair(device, size=(3, 4))
    tv = t._values().clone().requires_grad_()
    xv = ours(tv.detach(), device, requires_grad=True)
    ts = torch.sparse_coo_tensor(t._indices(), tv, t.shape)
    xs = torchweb.sparse_coo_tensor(x._indices(), xv, x.shape)
    td = torch.randn(4, 2, generator=torch.Generator().manual_seed(1)).requires_grad_()
    xd = ours(td.detach(), device, requires_grad=True)
    f = {"sparse.mm": lambda lib, a, b: lib.sparse.mm(a, b), "mm": lambda lib, a, b: lib.mm(a, b),
         "spmm": lambda lib, a, b: lib.spmm(a, b),
         "matmul": lambda lib, a, b: lib.matmul(a, b), "@": lambda lib, a, b: a @ b,
         "method": lambda lib, a, b: a.mm(b)}[form]
    r, y = f(torch, ts, td), f(torchweb, xs, xd)
    assert not y.is_sparse
    assert_close(y, r.detach())
    w = torch.tensor([[1.0, -1.0]] * 3)
    (r * w).sum().backward()
    (y * ours(w, device)).sum().backward()
    assert_close(xv.grad, tv.grad)
    assert_close(xd.grad, td.grad)


def test_other_products(device):
    t, x = _pair(device, size=(3, 4))
    d = torch.randn(2, 3, generator=torch.Generator().manual_seed(2))
    assert_close(torchweb.mm(ours(d, device), x), torch.mm(d, t))
    v = torch.randn(4, generator=torch.Generator().manual_seed(3))
    assert_close(torchweb.matmul(x, ours(v, device)), torch.matmul(t, v))
    ss, xx = torch.sparse.mm(t, t.t()), torchweb.sparse.mm(x, x.t())
    assert xx.is_sparse and ss.is_sparse
    assert_close(xx.to_dense(), ss.to_dense())
    m = torch.ones(3, 2)
    d2 = torch.randn(4, 2, generator=torch.Generator().manual_seed(4))
    assert_close(torchweb.sparse.addmm(ours(m, device), x, ours(d2, device), beta=0.5, alpha=2.0),
                 torch.sparse.addmm(m, t, d2, beta=0.5, alpha=2.0))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x2\)"):
        torchweb.sparse.mm(x, torchweb.zeros(3, 2, device=device))
    _same_sparse(x.t(), t.t())


def test_spmm_is_mm(device):
    """torch.spmm: torch.mm's older name, for either operand sparse or both dense; no Tensor.spmm.
    Its matrices only (a vector is an IndexError, as torch.mm's and torch.sparse.mm's)."""
    t, x = _pair(device, size=(3, 4))
    d = torch.randn(2, 3, generator=torch.Generator().manual_seed(6))
    assert_close(torchweb.spmm(ours(d, device), x), torch.spmm(d, t))
    e = torch.randn(4, 2, generator=torch.Generator().manual_seed(7))
    assert_close(torchweb.spmm(ours(d, device), ours(d.t() @ d, device)), torch.spmm(d, d.t() @ d))
    assert_close(torchweb.spmm(x, ours(e, device)), torch.spmm(t, e))
    assert not hasattr(torchweb.Tensor, "spmm") and not hasattr(torch.Tensor, "spmm")
    for lib, s in ((torch, t), (torchweb, x)):
        dev = {} if lib is torch else {"device": device}
        for f in (lib.spmm, lib.mm, lib.sparse.mm):
            with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                                 r"\[-1, 0\], but got 1\)"):
                f(s, lib.ones(4, **dev))
            with pytest.raises(IndexError, match=r"but got -2\)"):
                f(lib.ones(3, **dev), s)
        with pytest.raises(RuntimeError):
            lib.spmm(s, lib.ones(3, 2, **dev))


def test_sum_softmax(device):
    t, x = _pair(device)
    assert_close(torchweb.sparse.sum(x), torch.sparse.sum(t))
    assert_close(x.sum(), t.sum())
    for dim in (0, 1, (0, 1), -1):
        r, y = torch.sparse.sum(t, dim), torchweb.sparse.sum(x, dim)
        assert y.is_sparse == r.is_sparse
        assert_close(y.to_dense() if y.is_sparse else y, r.to_dense() if r.is_sparse else r)
    for fn in ("softmax", "log_softmax"):
        for dim in (0, 1):
            r, y = getattr(torch.sparse, fn)(t, dim), getattr(torchweb.sparse, fn)(x, dim)
            _same_sparse(y, r)


def test_softmax_gradient(device):
    t, x = _pair(device)
    tv = t._values().clone().requires_grad_()
    xv = ours(tv.detach(), device, requires_grad=True)
    ts = torch.sparse_coo_tensor(t._indices(), tv, t.shape).coalesce()
    xs = torchweb.sparse_coo_tensor(x._indices(), xv, x.shape).coalesce()
    w = torch.arange(1.0, 10.0).view(3, 3)
    (torch.sparse.softmax(ts, 1).to_dense() * w).sum().backward()
    (torchweb.sparse.softmax(xs, 1).to_dense() * ours(w, device)).sum().backward()
    assert_close(xv.grad, tv.grad)


def test_arithmetic_and_casts(device):
    t, x = _pair(device)
    _same_sparse(x * 2, t * 2)
    _same_sparse(3 * x, 3 * t)
    _same_sparse(x / 2, t / 2)
    _same_sparse(-x, -t)
    for name in ("half", "long", "int", "bool", "float"):
        _same_sparse(getattr(x, name)(), getattr(t, name)())
    _same_sparse(x.to(torchweb.float16), t.to(torch.float16))
    other = "webgpu" if device == "cpu" else "cpu"
    moved = x.to(other)
    assert moved.is_sparse and moved.device.type == other and moved._indices().device.type == other
    assert x.cpu().device.type == "cpu" and x.cuda().device.type == "webgpu"
    _same_sparse(x.clone(), t.clone())
    _same_sparse(x.detach(), t.detach())
    z = x.clone().zero_()
    assert z._nnz() == 0 and z.shape == x.shape
    one = torchweb.sparse_coo_tensor([[0]], [1.0], (3,), device=device)   # one entry: coalesced
    assert one.is_coalesced() == torch.sparse_coo_tensor([[0]], [1.0], (3,)).is_coalesced()


def test_leaf_sparse_tensor_gets_a_sparse_grad(device):
    t, x = _pair(device, requires_grad=True)
    assert x.requires_grad and x.is_leaf and t.is_leaf
    d = torch.randn(3, 2, generator=torch.Generator().manual_seed(5))
    torch.sparse.mm(t, d).sum().backward()
    torchweb.sparse.mm(x, ours(d, device)).sum().backward()
    assert x.grad.is_sparse
    assert_close(x.grad.to_dense(), t.grad.to_dense())
    x.grad = None
    assert x.grad is None


def test_module_with_a_sparse_buffer(device):
    class Net(torchweb.nn.Module):
        def __init__(self):
            super().__init__()
            adj = torchweb.tensor([[0.0, 1, 0], [1, 0, 1], [0, 1, 0]])
            self.register_buffer("adj", adj.to_sparse())
            self.lin = torchweb.nn.Linear(4, 2)

        def forward(self, x):
            return torchweb.sparse.mm(self.adj, self.lin(x))
    net = Net().to(device)
    assert net.adj.is_sparse and net.adj.device.type == device
    out = net(torchweb.ones(3, 4, device=device))
    out.sum().backward()
    assert net.lin.weight.grad.shape == (2, 4)
    sd = net.state_dict()
    assert sd["adj"].is_sparse
    other = Net().to(device)
    other.adj = torchweb.zeros(3, 3, device=device).to_sparse()
    other.load_state_dict(sd)
    assert_close(other.adj.to_dense(), torch.tensor([[0.0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    net.half()
    assert net.adj.dtype is torchweb.float16


def _spmm_function(lib, held):
    """pyGAT's SpecialSpmmFunction: a custom Function that saves the sparse matrix it builds."""
    class SpecialSpmm(lib.autograd.Function):
        @staticmethod
        def forward(ctx, indices, values, shape, b):
            a = lib.sparse_coo_tensor(indices, values, shape)
            ctx.save_for_backward(a, b)
            held.append(a)
            return lib.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_values = (grad_output @ b.t())[tuple(a._indices())]
            return None, grad_values, None, a.t().matmul(grad_output)
    return SpecialSpmm


@pytest.mark.parametrize("change", [None, "zero_", "copy_", "values"])
def test_custom_function_saves_a_sparse_tensor(device, change):
    """ctx.save_for_backward takes a sparse tensor: its version counter (shared with its values,
    bumped by its own in-place ops) is checked at backward, as PyTorch's."""
    results = []
    for lib, dev in ((torch, "cpu"), (torchweb, device)):
        held = []
        idx = lib.tensor(IDX, device=dev)
        v = lib.tensor(VAL, device=dev, requires_grad=True)
        b = lib.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]], device=dev, requires_grad=True)
        out = _spmm_function(lib, held).apply(idx, v, (3, 3), b)
        a = held[0]
        assert not a.requires_grad and a._version == 0   # made in forward: no history
        if change == "zero_":
            a.zero_()
        elif change == "copy_":
            a.copy_(lib.sparse_coo_tensor(idx, v.detach() * 2, (3, 3)))
        elif change == "values":
            a._values().mul_(2)
        if change is None:
            (out * lib.tensor([[1.0, 2.0]], device=dev)).sum().backward()
            results.append((out.detach(), v.grad, b.grad))
            continue
        assert a._version == 1
        with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.sparse.FloatTensor "
                                               r"\[3, 3\]\] is at version 1; expected version 0 instead"):
            out.sum().backward()
    if change is None:
        for got, want in zip(results[1], results[0]):
            assert_close(got, want)


def test_sparse_tensor_versions(device):
    for lib, dev in ((torch, "cpu"), (torchweb, device)):
        idx, v = lib.tensor(IDX, device=dev), lib.tensor(VAL, device=dev)
        v.add_(1)
        a = lib.sparse_coo_tensor(idx, v, (3, 3))
        seen = [a._version]
        a.zero_()
        seen.append(a._version)
        a.copy_(lib.sparse_coo_tensor(idx, v, (3, 3)))
        seen.append(a._version)
        a._values().mul_(2)
        seen.append(a._version)
        assert seen == [0, 1, 2, 3], lib.__name__
        w = lib.tensor(VAL, device=dev, requires_grad=True)
        with lib.no_grad():
            assert not lib.sparse_coo_tensor(idx, w, (3, 3)).requires_grad
        assert lib.sparse_coo_tensor(idx, w, (3, 3)).requires_grad


def test_save_load_both_ways(device):
    t, x = _pair(device)
    buf = io.BytesIO()
    torchweb.save({"s": x, "c": x.coalesce()}, buf)
    got = torch.load(io.BytesIO(buf.getvalue()))
    for key, ref in (("s", t), ("c", t.coalesce())):
        assert got[key].is_sparse and got[key].is_coalesced() == ref.is_coalesced()
        assert torch.equal(got[key].to_dense(), ref.to_dense())
    buf = io.BytesIO()
    torch.save({"s": t, "c": t.coalesce()}, buf)
    back = torchweb.load(io.BytesIO(buf.getvalue()), map_location=device)
    _same_sparse(back["s"], t)
    _same_sparse(back["c"], t.coalesce())
    _same_sparse(pickle.loads(pickle.dumps(x)), t)
    _same_sparse(copy.deepcopy(x), t)


@pytest.mark.parametrize("op", [lambda s: s + 1, lambda s: s.exp(), lambda s: torchweb.exp(s),
                                lambda s: s[0], lambda s: s.view(9), lambda s: s.sum(0, keepdim=True),
                                lambda s: s * torchweb.ones(3, 3), lambda s: s.T, lambda s: s.data_ptr(),
                                lambda s: bool(s), lambda s: s.tolist()])
def test_other_ops_are_refused_naming_the_layout(device, op):
    _, x = _pair(device)
    with pytest.raises(RuntimeError, match="sparse COO tensor \\(layout torch.sparse_coo\\)"):
        op(x)
    assert hash(x) == id(x)


def test_int64_slack_outside_int32_loads_to_webgpu():
    """PyTorch's coalesced indices view a storage with unset slack elements (any int64): a load
    to webgpu checks the elements its tensors view, not the whole storage."""
    base = torch.tensor([[1, 2 ** 40, 3], [4, -2 ** 40, 5]])
    buf = io.BytesIO()
    torch.save({"view": base[:, ::2]}, buf)
    got = torchweb.load(io.BytesIO(buf.getvalue()), map_location="webgpu")["view"]
    assert got.tolist() == [[1, 3], [4, 5]]
    buf = io.BytesIO()
    torch.save({"all": base}, buf)
    with pytest.raises(RuntimeError, match="value -?1099511627776 is out of range for torch.int64 on webgpu"):
        torchweb.load(io.BytesIO(buf.getvalue()), map_location="webgpu")


def test_sparse_mask(device):
    t, x = _pair(device)
    d = torch.arange(9.0).view(3, 3).requires_grad_()
    y = ours(d.detach(), device, requires_grad=True)
    r, z = d.sparse_mask(t), y.sparse_mask(x)
    _same_sparse(z, r)
    d.sparse_mask(t.coalesce()).to_dense().sum().backward()
    y.sparse_mask(x.coalesce()).to_dense().sum().backward()
    assert_close(y.grad, d.grad)
    with pytest.raises(NotImplementedError, match="sparse_mask"):
        y.sparse_mask(y)
