"""nn.Embedding(sparse=True) / F.embedding(sparse=True) / EmbeddingBag(sparse=True): weight's
gradient a sparse COO tensor as PyTorch's (uncoalesced, an entry per index looked up), its
accumulation over backward passes, and the optimizers that take it (SparseAdam, SGD,
Adagrad) training as PyTorch's; the others refuse with PyTorch's messages."""

import pytest
import torch

import torchweb
from oracle import assert_close, ours


def _weights(shape=(7, 3), seed=0):
    w = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    return w.clone().requires_grad_(True), w


def _same_grad(got, exp, device, raw=True):
    """The same sparse gradient: layout, size, coalesced flag, entries as they are (raw) and
    after coalesce."""
    assert got.layout == torchweb.sparse_coo and exp.layout == torch.sparse_coo
    assert tuple(got.shape) == tuple(exp.shape)
    assert got.is_coalesced() == exp.is_coalesced()
    assert got._indices().dtype == torchweb.int64
    assert got._nnz() == exp._nnz()
    if raw:
        assert got._indices().tolist() == exp._indices().tolist()
        assert_close(got._values(), exp._values())
    gc, ec = got.coalesce(), exp.coalesce()
    assert gc.is_coalesced() and gc.indices().tolist() == ec.indices().tolist()
    assert_close(gc.values(), ec.values())


@pytest.mark.parametrize("padding_idx,max_norm", [(None, None), (0, None), (-1, None), (None, 1.0)])
def test_sparse_grad_is_the_rows_looked_up(padding_idx, max_norm, device):
    tw, w = _weights()
    x = torch.tensor([[1, 0, 2], [2, 6, 0]])
    gout = torch.arange(18.0).reshape(2, 3, 3)
    ty = torch.nn.functional.embedding(x, tw, padding_idx=padding_idx, max_norm=max_norm, sparse=True)
    ty.backward(gout)
    p = ours(w, device, requires_grad=True)
    y = torchweb.nn.functional.embedding(ours(x, device), p, padding_idx=padding_idx, max_norm=max_norm, sparse=True)
    assert_close(y, ty)
    assert_close(p, tw.detach())   # (max_norm renormalizes the rows looked up, in place)
    assert y.grad_fn.name() == ty.grad_fn.name()
    y.backward(ours(gout, device))
    _same_grad(p.grad, tw.grad, device)


def test_accumulation_of_two_backward_passes(device):
    """Two passes concatenate the entries (PyTorch's merge of uncoalesced lists); two lookups
    of one weight in one pass likewise (the same entries after coalesce); a dense gradient
    joining a sparse one makes .grad dense."""
    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    for idx in ([[1, 2], [2, 4]], [5, 1]):
        torch.nn.functional.embedding(torch.tensor(idx), tw, sparse=True).sum().backward()
        torchweb.nn.functional.embedding(torchweb.tensor(idx, device=device), p, sparse=True).sum().backward()
    _same_grad(p.grad, tw.grad, device)

    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    ti, i = torch.tensor([4, 1]), torchweb.tensor([4, 1], device=device)
    tj, j = torch.tensor([3]), torchweb.tensor([3], device=device)
    F, TF = torchweb.nn.functional, torch.nn.functional
    (TF.embedding(ti, tw, sparse=True).sum() + 2 * TF.embedding(tj, tw, sparse=True).sum()).backward()
    (F.embedding(i, p, sparse=True).sum() + 2 * F.embedding(j, p, sparse=True).sum()).backward()
    _same_grad(p.grad, tw.grad, device, raw=False)   # (the order the two branches reach the weight is the engine's)

    for dense_first in (True, False):
        tw, w = _weights()
        p = ours(w, device, requires_grad=True)
        steps = [lambda t, e, idx: (t * 3).sum().backward(),
                 lambda t, e, idx: e.embedding(idx, t, sparse=True).sum().backward()]
        for step in steps if dense_first else steps[::-1]:
            step(tw, TF, ti)
            step(p, F, i)
        assert p.grad.layout == torchweb.strided and tw.grad.layout == torch.strided
        assert_close(p.grad, tw.grad)
    # a pass that looks up only padding_idx: an empty sparse gradient
    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    TF.embedding(torch.tensor([0, 0]), tw, padding_idx=0, sparse=True).sum().backward()
    F.embedding(torchweb.tensor([0, 0], device=device), p, padding_idx=0, sparse=True).sum().backward()
    _same_grad(p.grad, tw.grad, device)
    assert p.grad._nnz() == 0 and tuple(p.grad._indices().shape) == (1, 0)


def test_sparse_arithmetic_as_pytorch(device):
    """sparse + sparse merges the entry lists (coalesced only if both are), dense + sparse is
    dense, sparse + dense is refused with PyTorch's message."""
    ti, tv = torch.tensor([[1, 2, 2, 4]]), torch.arange(8.0).view(4, 2)
    t = torch.sparse_coo_tensor(ti, tv, (6, 2))
    s = torchweb.sparse_coo_tensor(ours(ti, device), ours(tv, device), (6, 2))
    th = torch.sparse_coo_tensor(torch.tensor([[5, 1]]), torch.ones(2, 2), (6, 2))
    h = torchweb.sparse_coo_tensor(torchweb.tensor([[5, 1]], device=device), torchweb.ones(2, 2, device=device),
                                   (6, 2))
    for got, exp in ((s + h, t + th), (s.coalesce() + s, t.coalesce() + t),
                     (s.coalesce() + h.coalesce(), t.coalesce() + th.coalesce()),
                     (s.add(h, alpha=-2), t.add(th, alpha=-2))):
        _same_grad(got, exp, device)
    assert_close(torchweb.ones(6, 2, device=device) + s, torch.ones(6, 2) + t)
    with pytest.raises(RuntimeError) as exp:
        t + torch.ones(6, 2)
    with pytest.raises(RuntimeError) as got:
        s + torchweb.ones(6, 2, device=device)
    assert str(got.value) == str(exp.value)


def test_scale_grad_by_freq_is_refused_with_sparse(device):
    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    ty = torch.nn.functional.embedding(torch.tensor([1, 1]), tw, sparse=True, scale_grad_by_freq=True)
    y = torchweb.nn.functional.embedding(torchweb.tensor([1, 1], device=device), p, sparse=True,
                                         scale_grad_by_freq=True)
    assert_close(y, ty)
    with pytest.raises(RuntimeError) as exp:
        ty.sum().backward()
    with pytest.raises(RuntimeError) as got:
        y.sum().backward()
    assert str(got.value) == str(exp.value)


@pytest.mark.parametrize("mode,padding_idx,weighted", [("sum", None, False), ("mean", 2, False),
                                                       ("sum", 1, True)])
def test_embedding_bag_sparse(mode, padding_idx, weighted, device):
    torch.manual_seed(0)
    tm = torch.nn.EmbeddingBag(6, 3, mode=mode, sparse=True, padding_idx=padding_idx)
    m = torchweb.nn.EmbeddingBag(6, 3, mode=mode, sparse=True, padding_idx=padding_idx).to(device)
    with torchweb.no_grad():
        m.weight.copy_(ours(tm.weight.detach(), device))
    x, offsets = torch.tensor([1, 2, 2, 3, 5, 1]), torch.tensor([0, 2, 5])
    psw = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) if weighted else None
    gout = torch.arange(9.0).view(3, 3)
    ty = tm(x, offsets, per_sample_weights=psw)
    y = m(ours(x, device), ours(offsets, device), per_sample_weights=None if psw is None else ours(psw, device))
    assert_close(y, ty)
    ty.backward(gout)
    y.backward(ours(gout, device))
    _same_grad(m.weight.grad, tm.weight.grad, device)


def test_embedding_bag_max_refuses_sparse():
    with pytest.raises(ValueError) as exp:
        torch.nn.EmbeddingBag(4, 2, mode="max", sparse=True)(torch.tensor([[1, 2]]))
    with pytest.raises(ValueError) as got:
        torchweb.nn.EmbeddingBag(4, 2, mode="max", sparse=True)(torchweb.tensor([[1, 2]]))
    assert str(got.value) == str(exp.value)


class _Model:
    """embedding(sparse=True) -> linear -> cross entropy, PyTorch's pair of optimizers: the
    sparse optimizer on the embedding, Adam on the linear layer."""

    def __init__(self, lib, device, make_sparse_opt):
        torch.manual_seed(3)
        ref = torch.nn.Embedding(10, 4, sparse=True, padding_idx=0), torch.nn.Linear(4, 3)
        if lib is torch:
            self.emb, self.lin = ref
        else:
            self.emb = torchweb.nn.Embedding(10, 4, sparse=True, padding_idx=0).to(device)
            self.lin = torchweb.nn.Linear(4, 3).to(device)
            with torchweb.no_grad():
                for mine, theirs in zip(list(self.emb.parameters()) + list(self.lin.parameters()),
                                        list(ref[0].parameters()) + list(ref[1].parameters())):
                    mine.copy_(ours(theirs.detach(), device))
        self.lib, self.device = lib, device
        self.opts = [make_sparse_opt(lib, self.emb.parameters()), lib.optim.Adam(self.lin.parameters(), lr=0.01)]

    def step(self, x, target):
        lib = self.lib
        if lib is torchweb and isinstance(x, torch.Tensor):
            x, target = ours(x, self.device), ours(target, self.device)
        for o in self.opts:
            o.zero_grad()
        loss = lib.nn.functional.cross_entropy(self.lin(self.emb(x).mean(1)), target)
        loss.backward()
        for o in self.opts:
            o.step()
        return loss


SPARSE_OPTIMIZERS = {
    "SparseAdam": lambda lib, ps: lib.optim.SparseAdam(list(ps), lr=0.05),
    "SGD": lambda lib, ps: lib.optim.SGD(ps, lr=0.5),
    "SGD-momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.3, momentum=0.9, dampening=0.1),
    "SGD-nesterov-maximize": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.8, nesterov=True, maximize=True),
    "Adagrad": lambda lib, ps: lib.optim.Adagrad(ps, lr=0.3, lr_decay=0.01, initial_accumulator_value=0.1),
}


@pytest.mark.parametrize("name", sorted(SPARSE_OPTIMIZERS))
def test_training_with_sparse_gradients_matches_pytorch(name, device):
    """A few steps of PyTorch's docs' loop: the embedding's rows that the batches touch move
    as PyTorch's, the others stay; the linear layer (dense Adam) follows."""
    make = SPARSE_OPTIMIZERS[name]
    theirs, mine = _Model(torch, device, make), _Model(torchweb, device, make)
    g = torch.Generator().manual_seed(5)
    for _ in range(4):
        x = torch.randint(0, 8, (5, 3), generator=g)
        target = torch.randint(0, 3, (5,), generator=g)
        assert_close(mine.step(x, target), theirs.step(x, target), rtol=1e-4, atol=1e-5)
        assert mine.emb.weight.grad.is_sparse
    assert_close(mine.emb.weight, theirs.emb.weight.detach(), rtol=1e-4, atol=1e-5)
    assert_close(mine.lin.weight, theirs.lin.weight.detach(), rtol=1e-4, atol=1e-5)
    assert_close(mine.emb.weight[8:], theirs.emb.weight.detach()[8:], rtol=0, atol=0)   # (never looked up)
    tstate, state = theirs.opts[0].state[theirs.emb.weight], mine.opts[0].state[mine.emb.weight]
    assert sorted(state) == sorted(tstate)
    for k, v in tstate.items():
        if torch.is_tensor(v) and v.is_sparse:
            _same_grad(state[k], v, device)
        elif torch.is_tensor(v):
            assert_close(state[k], v, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("Adam", {}), ("AdamW", {}), ("Adamax", {}), ("NAdam", {}),
                                         ("RAdam", {}), ("RMSprop", {}), ("Adadelta", {}),
                                         ("SGD", {"weight_decay": 0.1}), ("Adagrad", {"weight_decay": 0.1})])
def test_refusals_of_sparse_gradients(name, kwargs, device):
    """The optimizers that refuse a sparse gradient, and the options SGD and Adagrad refuse
    with one, raise PyTorch's RuntimeError with its message."""
    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor([1, 3]), tw, sparse=True).sum().backward()
    torchweb.nn.functional.embedding(torchweb.tensor([1, 3], device=device), p, sparse=True).sum().backward()
    with pytest.raises(RuntimeError) as exp:
        getattr(torch.optim, name)([tw], lr=0.1, **kwargs).step()
    with pytest.raises(RuntimeError) as got:
        getattr(torchweb.optim, name)([p], lr=0.1, **kwargs).step()
    assert str(got.value) == str(exp.value)


def test_zero_grad_keeps_an_empty_sparse_grad(device):
    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor([1]), tw, sparse=True).sum().backward()
    torchweb.nn.functional.embedding(torchweb.tensor([1], device=device), p, sparse=True).sum().backward()
    torch.optim.SGD([tw], lr=0.1).zero_grad(set_to_none=False)
    torchweb.optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    _same_grad(p.grad, tw.grad, device)


def test_module_repr():
    assert repr(torchweb.nn.Embedding(3, 2, sparse=True)) == repr(torch.nn.Embedding(3, 2, sparse=True))


def test_create_graph_gives_a_sparse_grad_without_a_graph(device):
    """backward(create_graph=True) through a sparse lookup: .grad is the sparse gradient, with
    no graph of its own (PyTorch's sparse embedding backward is not differentiable)."""
    tw, w = _weights()
    p = ours(w, device, requires_grad=True)
    ty = torch.nn.functional.embedding(torch.tensor([1, 3, 1]), tw, sparse=True)
    (ty * ty).sum().backward(create_graph=True)
    y = torchweb.nn.functional.embedding(torchweb.tensor([1, 3, 1], device=device), p, sparse=True)
    (y * y).sum().backward(create_graph=True)
    _same_grad(p.grad, tw.grad, device)
    assert p.grad._values().requires_grad == tw.grad._values().requires_grad == False  # noqa: E712


def test_compile_refuses_a_step_with_a_sparse_gradient():
    """An update of a sparse gradient runs op by op: torchweb.compile runs the step as it is
    (no capture, the reason named) and the weights still match PyTorch's."""
    tw, w = _weights()
    p = ours(w, "webgpu", requires_grad=True)
    topt, opt = torch.optim.SGD([tw], lr=0.5), torchweb.optim.SGD([p], lr=0.5)

    def step(idx):
        opt.zero_grad()
        torchweb.nn.functional.embedding(idx, p, sparse=True).pow(2).sum().backward()
        opt.step()

    compiled = torchweb.compile(step)
    for idx in ([1, 3, 1], [2, 3, 4], [6, 6, 0]):
        topt.zero_grad()
        torch.nn.functional.embedding(torch.tensor(idx), tw, sparse=True).pow(2).sum().backward()
        topt.step()
        compiled(torchweb.tensor(idx, device="webgpu"))
    assert_close(p, tw.detach())
    stats = compiled.compile_stats
    assert stats["replays"] == 0 and "SGD's update of a sparse gradient" in stats["reasons"][0], stats
