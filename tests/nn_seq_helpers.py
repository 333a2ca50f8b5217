"""Helpers of the sequence-module tests (attention, transformer, recurrent layers): build a
torchweb module and PyTorch's from the same state_dict, run both on the same inputs, compare
outputs, and the gradients of the inputs and of every parameter."""

import torch

import torchweb
from oracle import OUR_DTYPE, assert_close, theirs


def to_torch_state(m):
    return {k: theirs(v) for k, v in m.state_dict().items()}


def load_into_torch(m, tm):
    """Copy torchweb module m's state into torch module tm (keys and shapes must match)."""
    ours_sd, theirs_sd = m.state_dict(), tm.state_dict()
    assert list(ours_sd.keys()) == list(theirs_sd.keys()), (list(ours_sd), list(theirs_sd))
    for k in ours_sd:
        assert tuple(ours_sd[k].shape) == tuple(theirs_sd[k].shape), k
    tm.load_state_dict(to_torch_state(m))


def flat(x):
    """Tensors of a nested output, in order (None skipped)."""
    if x is None:
        return []
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in flat(e)]
    return [x]


def mine(t, device, grad=False):
    if t is None or not isinstance(t, torch.Tensor):
        return t
    if t.numel() == 0:
        r = torchweb.zeros(tuple(t.shape), dtype=OUR_DTYPE[t.dtype], device=device)
    else:
        r = torchweb.tensor(t.detach().tolist(), dtype=OUR_DTYPE[t.dtype], device=device)
    return r.requires_grad_(True) if grad else r


def compare(m, tm, args, device, kwargs=None, grad=True, grad_args=None, rtol=2e-5, atol=2e-5,
            train=False, call=None):
    """Run m (torchweb, moved to device) and tm (torch) on args; compare outputs; with grad,
    backward from the same random upstream gradients and compare the grads of the float
    tensor args (or those whose positions are in grad_args) and of every parameter."""
    kwargs = kwargs or {}
    call = call or (lambda mod, *a, **k: mod(*a, **k))
    m.to(device)
    m.train(train)
    tm.train(train)
    load_into_torch(m, tm)
    if grad_args is None:
        grad_args = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.dtype.is_floating_point]
    targs = [a.detach().clone().requires_grad_(grad and i in grad_args) if isinstance(a, torch.Tensor) else a
             for i, a in enumerate(args)]
    margs = [mine(a, device, grad and i in grad_args) for i, a in enumerate(args)]
    tkw = {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}
    mkw = {k: mine(v, device) for k, v in kwargs.items()}
    expected = call(tm, *targs, **tkw)
    got = call(m, *margs, **mkw)
    ef, gf = flat(expected), flat(got)
    assert len(ef) == len(gf), (len(ef), len(gf))
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            assert (e is None) == (g is None)
    for g, e in zip(gf, ef):
        assert_close(g.detach(), e.detach(), rtol=rtol, atol=atol)
    if not grad:
        return got
    pairs = [(g, e) for g, e in zip(gf, ef) if e.dtype.is_floating_point]  # packed: skip batch_sizes
    gf, ef = [g for g, _ in pairs], [e for _, e in pairs]
    gen = torch.Generator().manual_seed(11)
    ups = [torch.randn(e.shape, generator=gen, dtype=e.dtype) for e in ef]
    loss_t = sum((e * u).sum() for e, u in zip(ef, ups))
    loss_t.backward()
    loss_m = None
    for g, u in zip(gf, ups):
        term = (g * mine(u, device)).sum()
        loss_m = term if loss_m is None else loss_m + term
    loss_m.backward()
    for i in grad_args:
        assert_close(margs[i].grad, targs[i].grad, rtol=rtol * 5, atol=atol * 5)
    tparams = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        tp = tparams[name]
        if tp.grad is None:
            assert p.grad is None or float(p.grad.abs().max()) == 0.0, name
        else:
            assert p.grad is not None, name
            assert_close(p.grad, tp.grad, rtol=rtol * 5, atol=atol * 5)
    return got


def rand(*shape, seed=0, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale
