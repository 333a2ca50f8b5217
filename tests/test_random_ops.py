"""multinomial, bernoulli, normal and the in-place distributions: torchweb's generator is not
PyTorch's, so values are checked by their statistics and determinism, errors against PyTorch."""

import math

import pytest
import torch

import torchweb as tw


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


def test_multinomial_with_replacement_frequencies(device):
    tw.manual_seed(1)
    p = tw.tensor([[1.0, 2.0, 7.0, 0.0], [0.0, 0.0, 0.0, 5.0]], device=device)
    s = tw.multinomial(p, 20000, replacement=True)
    assert s.shape == (2, 20000) and s.dtype == tw.int64 and s.device.type == device
    freq = [(s[0] == k).float().mean().item() for k in range(4)]
    for got, want in zip(freq, [0.1, 0.2, 0.7, 0.0]):
        assert abs(got - want) < 0.015
    assert (s[1] == 3).all().item()


def test_multinomial_without_replacement_is_a_draw_of_distinct_indices(device):
    tw.manual_seed(2)
    p = tw.tensor([0.05, 0.05, 0.9, 0.0, 0.0], device=device)
    firsts = [tw.multinomial(p, 3).tolist() for _ in range(200)]
    assert all(len(set(f)) == 3 and 3 not in f[:1] for f in firsts)
    assert sum(f[0] == 2 for f in firsts) > 150        # the heavy category comes first mostly
    tw.manual_seed(5)
    a = tw.multinomial(p, 2).tolist()
    tw.manual_seed(5)
    assert tw.multinomial(p, 2).tolist() == a


@pytest.mark.parametrize("args", [
    ([[0.5, 0.5]], 3, False), ([0.5, -0.1], 1, True), ([0.0, 0.0], 1, True),
    ([0.5, float("nan")], 1, True), ([[[0.5]]], 1, True), ([0.5, 0.5], 0, True)])
def test_multinomial_errors_match_pytorch(args, device):
    data, n, repl = args
    assert _err(lambda: tw.multinomial(tw.tensor(data, device=device), n, repl)) == \
        _err(lambda: torch.multinomial(torch.tensor(data), n, repl))


def test_bernoulli_and_in_place_distributions(device):
    tw.manual_seed(3)
    probs = tw.full((20000,), 0.3, device=device)
    b = tw.bernoulli(probs)
    assert b.dtype == tw.float32 and set(b.unique().tolist()) <= {0.0, 1.0}
    assert abs(b.mean().item() - 0.3) < 0.015
    x = tw.empty(20000, device=device)
    assert abs(x.bernoulli_(0.8).mean().item() - 0.8) < 0.015
    assert abs(x.exponential_(2.0).mean().item() - 0.5) < 0.02 and x.min().item() >= 0
    g = x.geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.mean().item() - 4.0) < 0.15
    ln = x.log_normal_(0.0, 0.5)
    assert abs(ln.log().mean().item()) < 0.02 and abs(ln.log().std().item() - 0.5) < 0.02
    c = x.cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1
    for bad_t, bad_w in ((lambda: x.exponential_(-1.0), lambda: torch.empty(3).exponential_(-1.0)),
                         (lambda: x.bernoulli_(1.5), lambda: torch.empty(3).bernoulli_(1.5)),
                         (lambda: x.geometric_(0.0), lambda: torch.empty(3).geometric_(0.0))):
        assert _err(bad_t) == _err(bad_w)


def test_normal_forms_and_gradient(device):
    tw.manual_seed(4)
    a = tw.normal(2.0, 3.0, (40000,), device=device)
    assert abs(a.mean().item() - 2.0) < 0.05 and abs(a.std().item() - 3.0) < 0.05
    mean = tw.zeros(3, requires_grad=True, device=device)
    std = tw.full((3,), 2.0, requires_grad=True, device=device)
    y = tw.normal(mean, std)
    y.sum().backward()
    assert mean.grad.tolist() == [1.0, 1.0, 1.0]
    noise = (y.detach() - mean.detach()) / 2.0
    assert [round(v, 5) for v in std.grad.tolist()] == [round(v, 5) for v in noise.tolist()]
    assert tw.normal(tw.zeros(2, 1, device=device), tw.ones(3, device=device)).shape == (2, 3)
    assert _err(lambda: tw.normal(0.0, -1.0, (2,))) == _err(lambda: torch.normal(0.0, -1.0, (2,)))
    assert math.isfinite(tw.normal(tw.zeros(2, device=device), 1.0).sum().item())
