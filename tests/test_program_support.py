"""Small pieces of PyTorch's surface that the corpus programs (tests/test_corpus.py) reach for,
each compared with PyTorch: torch._assert, torch.utils.checkpoint, torch.nn.parallel on one
device, torch._utils' flatten helpers, numpy scalars on the left of an operator, numpy arrays
inside torch.tensor's list, and uniform_/normal_'s keyword names."""

import numpy as np
import pytest
import torch

import torchweb as tw
from oracle import assert_close, ours


def test_assert_raises_assertion_error_with_the_message():
    tw._assert(True, "unused")
    with pytest.raises(AssertionError, match="shape mismatch"):
        tw._assert(False, "shape mismatch")
    with pytest.raises(AssertionError, match="shape mismatch"):
        torch._assert(False, "shape mismatch")


def test_checkpoint_gives_the_same_values_and_gradients(device):
    import torch.utils.checkpoint as t_cp
    import torchweb.utils.checkpoint as cp
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    w = torch.randn(4, 2, generator=torch.Generator().manual_seed(1)).requires_grad_()
    xo, wo = ours(x, device), ours(w, device, requires_grad=True)
    fn = lambda lib: (lambda a, b: lib.tanh(a @ b).sum(0))  # noqa: E731
    got = cp.checkpoint(fn(tw), xo, wo, use_reentrant=False)
    want = t_cp.checkpoint(fn(torch), x, w, use_reentrant=False)
    assert_close(got, want.detach(), rtol=1e-5, atol=1e-6)
    got.sum().backward()
    want.sum().backward()
    assert_close(wo.grad, w.grad, rtol=1e-5, atol=1e-6)
    seq = tw.nn.Sequential(tw.nn.ReLU(), tw.nn.Tanh())
    assert_close(cp.checkpoint_sequential(seq, 2, xo, use_reentrant=False),
                 t_cp.checkpoint_sequential(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh()), 2, x,
                                            use_reentrant=False))


def test_data_parallel_on_one_device_runs_the_module(device):
    lin = tw.nn.Linear(4, 2).to(device)
    x = tw.ones(3, 4, device=device)
    wrapped = tw.nn.DataParallel(lin)
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]   # PyTorch's keys
    assert list(torch.nn.DataParallel(torch.nn.Linear(4, 2)).state_dict()) == ["module.weight", "module.bias"]
    assert tw.equal(wrapped(x), lin(x))
    assert tw.equal(tw.nn.parallel.data_parallel(lin, x, range(1)), lin(x))
    assert not hasattr(tw.nn.parallel, "DistributedDataParallel")


def test_flatten_dense_tensors_round_trip(device):
    from torch._utils import _flatten_dense_tensors as t_flat, _unflatten_dense_tensors as t_unflat
    from torchweb._utils import _flatten_dense_tensors, _unflatten_dense_tensors
    a, b = torch.arange(6.0).reshape(2, 3), torch.tensor([7.0, 8.0])
    flat = _flatten_dense_tensors([ours(a, device), ours(b, device)])
    assert_close(flat, t_flat([a, b]))
    back = _unflatten_dense_tensors(flat, [ours(a, device), ours(b, device)])
    assert_close(back, t_unflat(t_flat([a, b]), [a, b]))


def test_numpy_scalar_on_the_left_gives_a_tensor(device):
    # np.float64 is a float: numpy's operator would take it first and make an object ndarray
    x = torch.arange(4.0)
    for scalar in (np.float64(0.5), np.log(10000.0) / 3):
        got = scalar * ours(x, device)
        assert isinstance(got, tw.Tensor)
        assert_close(got, scalar * x)
        assert_close(scalar - ours(x, device), scalar - x)


def test_tensor_from_a_list_of_numpy_arrays(device):
    states = [np.array([0.1, 0.2], dtype=np.float32), np.array([0.3, 0.4], dtype=np.float32)]
    assert_close(tw.tensor(states, dtype=tw.float, device=device), torch.tensor(np.array(states), dtype=torch.float))
    nested = [[np.int64(1), 2], np.array([3, 4])]
    assert_close(tw.tensor(nested, device=device), torch.tensor([[1, 2], [3, 4]]))


def test_random_fills_take_pytorchs_keyword_names(device):
    t = tw.empty(2000, device=device).normal_(mean=1.0, std=0.02)
    assert abs(t.mean().item() - 1.0) < 0.01 and abs(t.std().item() - 0.02) < 0.005
    u = tw.empty(2000, device=device).uniform_(**{"from": -3.0, "to": -2.0})
    assert -3.0 <= u.min().item() and u.max().item() < -2.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'sigma'"):
        tw.empty(3, device=device).normal_(sigma=1.0)
    with pytest.raises(TypeError):
        torch.empty(3).normal_(sigma=1.0)
