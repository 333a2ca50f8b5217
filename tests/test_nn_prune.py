"""nn.utils.prune against PyTorch: the deterministic methods (l1_unstructured, ln_structured,
custom_from_mask, identity, global_unstructured with L1Unstructured) give PyTorch's masks,
parameters, buffers and forward; composed prunings (PruningContainer); remove; is_pruned;
the random methods prune the asked amount; errors."""

import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (a submodule PyTorch does not import)

import torchweb
import torchweb.nn.utils.prune  # noqa: F401
from oracle import assert_close, make, ours, theirs

TP, WP = torch.nn.utils.prune, torchweb.nn.utils.prune


def _pair(device, build=lambda nn: nn.Linear(6, 4)):
    ref = build(torch.nn)
    mine = build(torchweb.nn).to(device)
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    return mine, ref


def _same_state(mine, ref):
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in ref.named_buffers()]
    for (k, a), (_, b) in zip(mine.state_dict().items(), ref.state_dict().items()):
        assert_close(a, b.detach(), rtol=0, atol=0)


@pytest.mark.parametrize("prune", [
    lambda P, m: P.l1_unstructured(m, "weight", amount=0.3),
    lambda P, m: P.l1_unstructured(m, "bias", amount=2),
    lambda P, m: P.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
    lambda P, m: P.ln_structured(m, "weight", amount=2, n=1, dim=1),
    lambda P, m: P.identity(m, "weight"),
    lambda P, m: P.l1_unstructured(m, "weight", amount=0.0),
])
def test_deterministic(device, prune):
    mine, ref = _pair(device)
    prune(WP, mine)
    prune(TP, ref)
    _same_state(mine, ref)
    assert_close(mine.weight, ref.weight.detach(), rtol=0, atol=0)
    x = make((3, 6))
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e, g = ref(tx), mine(wx)
    assert_close(g, e.detach(), rtol=1e-5, atol=1e-5)
    e.sum().backward()
    g.sum().backward()
    assert_close(mine.weight_orig.grad, ref.weight_orig.grad, rtol=1e-5, atol=1e-5) if hasattr(ref, "weight_orig") else None
    assert WP.is_pruned(mine) and TP.is_pruned(ref)


def test_importance_scores_and_custom_mask(device):
    mine, ref = _pair(device)
    scores = make((4, 6))
    WP.l1_unstructured(mine, "weight", amount=5, importance_scores=ours(scores, device))
    TP.l1_unstructured(ref, "weight", amount=5, importance_scores=scores)
    _same_state(mine, ref)
    mask = make((4, 6)) > 0
    mine2, ref2 = _pair(device)
    WP.custom_from_mask(mine2, "weight", mask=ours(mask, device))
    TP.custom_from_mask(ref2, "weight", mask=mask)
    _same_state(mine2, ref2)


def test_composed_and_remove(device):
    mine, ref = _pair(device, lambda nn: nn.Conv2d(3, 4, 2))
    for P, m in ((WP, mine), (TP, ref)):
        P.l1_unstructured(m, "weight", amount=0.2)
        P.ln_structured(m, "weight", amount=1, n=2, dim=0)
        P.l1_unstructured(m, "weight", amount=3)
    hooks = [h for h in mine._forward_pre_hooks.values()]
    assert len(hooks) == 1 and isinstance(hooks[0], WP.PruningContainer) and len(hooks[0]) == 3
    _same_state(mine, ref)
    x = make((1, 3, 4, 4))
    assert_close(mine(ours(x, device)), ref(x).detach(), rtol=1e-5, atol=1e-5)
    WP.remove(mine, "weight")
    TP.remove(ref, "weight")
    _same_state(mine, ref)
    assert type(mine.weight) is torchweb.nn.Parameter and not WP.is_pruned(mine)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        WP.remove(mine, "weight")


def test_global_unstructured(device):
    def build(nn):
        return nn.Sequential(nn.Linear(5, 4), nn.Linear(4, 3))
    mine, ref = _pair(device, build)
    for P, m in ((WP, mine), (TP, ref)):
        P.global_unstructured([(m[0], "weight"), (m[1], "weight"), (m[1], "bias")],
                              pruning_method=P.L1Unstructured, amount=0.4)
    _same_state(mine, ref)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        WP.global_unstructured([(mine[0], "bias")], pruning_method=WP.LnStructured, amount=1, n=2, dim=0)


def test_random_methods(device):
    torchweb.manual_seed(0)
    m = torchweb.nn.Linear(10, 8).to(device)
    WP.random_unstructured(m, "weight", amount=0.25)
    assert int((m.weight_mask == 0).sum()) == 20 and m.weight_mask.dtype == torchweb.float32
    WP.random_structured(m, "weight", amount=3, dim=0)
    rows_zero = int(((m.weight_mask == 0).all(dim=1)).sum())
    assert rows_zero >= 3
    assert_close(m.weight, theirs(m.weight_orig * m.weight_mask), rtol=0, atol=0)


@pytest.mark.parametrize("call,exc", [
    (lambda P, m: P.l1_unstructured(m, "weight", amount=1.5), ValueError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount=-1), ValueError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount="a"), TypeError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount=100), ValueError),
    (lambda P, m: P.ln_structured(m, "bias", amount=1, n=2, dim=0), ValueError),
    (lambda P, m: P.ln_structured(m, "weight", amount=1, n=2, dim=2), IndexError),
])
def test_errors(device, call, exc):
    mine, ref = _pair(device)
    with pytest.raises(exc) as info:
        call(TP, ref)
    with pytest.raises(exc) as got:
        call(WP, mine)
    assert str(got.value) == str(info.value)
    # a failed pruning leaves the module as it was
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
