"""Comparing a torchweb layer module with PyTorch's: the same state_dict (torchweb's values
copied into the torch module, which also checks PyTorch's keys and shapes), forward on the same
input, backward from the same upstream gradient (input and parameter .grad), buffers after."""

import torch

import torchweb
from oracle import assert_close, make, ours, ours_layout, theirs


def pair(build, device):
    """build(nn) -> a module; the torchweb one on `device`, the torch one with its state."""
    mine = build(torchweb.nn).to(device)
    ref = build(torch.nn)
    assert repr(mine) == repr(ref), f"\n{mine!r}\n!=\n{ref!r}"
    sd = mine.state_dict()
    assert list(sd) == list(ref.state_dict()), (list(sd), list(ref.state_dict()))
    ref.load_state_dict({k: theirs(v) for k, v in sd.items()})
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert a.requires_grad == b.requires_grad, k
    return mine, ref


def _is_float(t):
    return isinstance(t, torch.Tensor) and t.dtype.is_floating_point


def run(mine, ref, inputs, device, *, grad=True, rtol=1e-4, atol=1e-5, kwargs=None, out_index=None,
        mine_kwargs=None, layout="contiguous"):
    """Forward (and backward when grad) of both modules on the torch tensors `inputs` (float ones
    require grad); returns (torchweb output, torch output)."""
    kwargs = kwargs or {}
    t_in = [x.detach().clone().requires_grad_(grad and _is_float(x)) if isinstance(x, torch.Tensor) else x
            for x in inputs]
    w_in = [ours(x, device, requires_grad=grad and _is_float(x)) if isinstance(x, torch.Tensor) else x
            for x in inputs]
    if layout != "contiguous":   # non-contiguous views of leaves (gradients compared on the leaves)
        w_in = [ours_layout(x, device, layout).requires_grad_(grad and _is_float(x))
                if isinstance(x, torch.Tensor) else x for x in inputs]
    expected = ref(*t_in, **kwargs)
    if mine_kwargs is None:
        mine_kwargs = {k: ours(v, device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    got = mine(*w_in, **mine_kwargs)
    e = expected[out_index] if out_index is not None else expected
    g = got[out_index] if out_index is not None else got
    assert_close(g, e, rtol=rtol, atol=atol)
    if out_index is not None:
        assert_close(list(got), list(expected), rtol=rtol, atol=atol)
    if grad and (e.requires_grad):
        up = make(tuple(e.shape))
        e.backward(up)
        g.backward(ours(up, device))
        for a, b in zip(w_in, t_in):
            if isinstance(b, torch.Tensor) and b.requires_grad:
                assert_close(a.grad, b.grad, rtol=rtol, atol=atol)
        for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
            if b.grad is None:
                assert a.grad is None, k
            else:
                assert a.grad is not None, k
                assert_close(a.grad, b.grad, rtol=rtol, atol=atol)
    compare_state(mine, ref, rtol, atol)
    return got, expected


def compare_state(mine, ref, rtol=1e-4, atol=1e-5):
    a, b = mine.state_dict(), ref.state_dict()
    assert list(a) == list(b)
    for k in a:
        assert_close(a[k], b[k], rtol=rtol, atol=atol)


def check_module(build, inputs, device, modes=("train", "eval"), **kw):
    """pair + run in each mode (fresh modules per mode)."""
    for mode in modes:
        mine, ref = pair(build, device)
        mine.train(mode == "train")
        ref.train(mode == "train")
        run(mine, ref, inputs, device, **kw)


def _norm_sets(msg):
    """Set literals in messages print in hash order: compare their sorted items."""
    import re
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", msg)


def check_ctor_error(build):
    """PyTorch's constructor refuses: torchweb refuses with the same exception type and message."""
    try:
        build(torch.nn)
    except Exception as e:  # noqa: BLE001
        try:
            build(torchweb.nn)
        except type(e) as e2:
            assert _norm_sets(str(e2)) == _norm_sets(str(e)), (str(e2), str(e))
            return
        raise AssertionError(f"torchweb accepted what PyTorch refuses with {type(e).__name__}: {e}")
    raise AssertionError("PyTorch accepted it")


def check_forward_error(build, inputs, device, kwargs=None):
    """Both modules refuse `inputs` with the same exception type."""
    import pytest
    mine, ref = pair(build, device)
    kwargs = kwargs or {}
    with pytest.raises(Exception) as info:
        ref(*inputs, **kwargs)
    with pytest.raises(info.type):
        mine(*[ours(x, device) if isinstance(x, torch.Tensor) else x for x in inputs], **kwargs)


def uniform_bounds(t, bound):
    """Every value in [-bound, bound] and the spread covers most of it."""
    v = theirs(t).flatten()
    assert v.abs().max().item() <= bound + 1e-6, (v.abs().max().item(), bound)
    if v.numel() >= 50:
        assert v.max().item() > 0.7 * bound and v.min().item() < -0.7 * bound
