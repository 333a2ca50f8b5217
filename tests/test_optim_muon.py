"""torchweb.optim.Muon vs torch.optim.Muon (PyTorch 2.13), on both devices: option checks and
messages, the bfloat16 Newton-Schulz iteration (emulated in float32 with the bfloat16_round
row), state_dict both ways, and training a small MLP as PyTorch's docs show (Muon for the
hidden layers' weights, AdamW for the rest).

The tolerances, and why (measured on both devices, this file's model and data):
- Without the iteration (ns_steps=0) everything is elementwise and deterministic: 20 steps
  match PyTorch as the other optimizers do (loss and parameters to ~1e-6).
- The iteration's matmuls sum in another order than PyTorch's bfloat16 kernels, which now
  and then moves a result to the neighbouring bfloat16 value, and the next matmuls spread it.
  On the same input the result differs from PyTorch's by at most 2.8e-3 in relative Frobenius
  norm here (6.5e-3 over other seeds; PyTorch's own float32 emulation, its sums ordered as its
  float32 matmul orders them, differs by as much), while the same iteration without the
  bfloat16 rounding differs by 1.3e-2 to 2.7e-2: bound 1e-2.
- One step from PyTorch's state (its weights and optimizer state loaded each step): a Muon
  parameter moves by adjusted_lr times the orthogonalized update (entries up to ~0.5), and
  differs from PyTorch's by at most 7.8e-3 * adjusted_lr (a few bfloat16 units of an entry):
  bound 2^-6 * adjusted_lr. The momentum buffer, the AdamW parameters and the loss: 1e-6.
- 20 steps run freely: those differences feed the next gradients, and the iteration amplifies
  small singular directions (its slope at zero is a = 3.4445 per step, a^5 ~ 480), so the runs
  drift apart as PyTorch drifts from its own float32 emulation: loss curves within 6.6e-4 of
  PyTorch's (the emulation: 3.7e-4), parameters within 2.5e-2 relative Frobenius norm (the
  emulation: 1.4e-2), the loss falling by 0.55 to 0.78 meanwhile. Bounds 1.5e-3 and 6e-2.
"""

import copy

import numpy as np
import pytest
import torch

import torchweb
from oracle import ours, theirs
from torchweb.ops.elementwise import call
from torchweb.optim import muon

DIMS = (16, 48, 64, 32, 10)   # hidden weights (64, 48): tall, (32, 64): wide
STEPS = 20


def _model(lib, device=None):
    """The same MLP in both libraries (PyTorch's initial weights)."""
    torch.manual_seed(0)
    layers = []
    for i in range(len(DIMS) - 1):
        layers.append(torch.nn.Linear(DIMS[i], DIMS[i + 1]))
        if i < len(DIMS) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    if lib is torch:
        return model
    mine = torchweb.nn.Sequential(*[torchweb.nn.Linear(m.in_features, m.out_features)
                                    if isinstance(m, torch.nn.Linear) else torchweb.nn.ReLU() for m in layers])
    mine.load_state_dict({k: ours(v, device) for k, v in model.state_dict().items()})
    return mine.to(device)


def _optimizers(lib, model, **options):
    """Muon for the hidden layers' weights, AdamW for the rest (the first and last layers and
    the biases), as PyTorch's Muon docs show."""
    last = len(model) - 1
    hidden = [p for n, p in model.named_parameters() if p.ndim == 2 and n not in ("0.weight", f"{last}.weight")]
    rest = [p for p in model.parameters() if all(p is not h for h in hidden)]
    return lib.optim.Muon(hidden, lr=0.02, **options), lib.optim.AdamW(rest, lr=3e-3, weight_decay=0.01)


def _data():
    """A learnable full-batch problem: labels from a fixed linear teacher."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    return x, (x @ torch.randn(16, 10, generator=g)).argmax(1)


def _step(lib, model, opts, x, y):
    for o in opts:
        o.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    for o in opts:
        o.step()
    return loss.item()


def _train(lib, device, steps=STEPS, **options):
    model = _model(lib, device)
    opts = _optimizers(lib, model, **options)
    x, y = _data()
    if lib is torchweb:
        x, y = ours(x, device), ours(y, device)
    return [_step(lib, model, opts, x, y) for _ in range(steps)], model, opts


def _array(t):
    return np.array(t.detach().tolist(), np.float32)


def _to_torchweb_state(sd, device):
    def c(v):
        if isinstance(v, torch.Tensor):
            return ours(v, device)
        if isinstance(v, dict):
            return {k: c(x) for k, x in v.items()}
        return copy.deepcopy(v)
    return {"state": {i: {k: c(v) if k != "step" else ours(v, "cpu") for k, v in s.items()}
                      for i, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


def _to_torch_state(sd):
    return {"state": {i: {k: theirs(v) for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


def _adjusted_lr(opt, p):
    group = next(g for g in opt.param_groups if any(q is p for q in g["params"]))
    return muon._adjust_lr(group["lr"], group["adjust_lr_fn"], tuple(p.shape))


# -- options and errors ------------------------------------------------------------------------
def _raised(fn):
    try:
        fn()
    except Exception as e:   # (the exception compared below, whatever its type)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("options", [dict(lr=-0.1), dict(momentum=-0.5), dict(weight_decay=-1.0),
                                     dict(adjust_lr_fn="sqrt"), dict(lr="tensor2"), dict(foreach=True),
                                     dict(fused=True), dict(capturable=True), dict(differentiable=True),
                                     dict(maximize=True)], ids=str)
def test_bad_options_raise_as_pytorch(options):
    """The checks and their messages; the flags other optimizers take are refused, as PyTorch's
    Muon refuses them (a TypeError: its __init__ has no such argument)."""
    def make(lib):
        kw = dict(options)
        if kw.get("lr") == "tensor2":
            kw["lr"] = lib.tensor([0.1, 0.2])
        return lambda: lib.optim.Muon([lib.zeros(3, 4, requires_grad=True)], **kw)
    expected = _raised(make(torch))
    assert expected is not None
    assert _raised(make(torchweb)) == expected


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), ()], ids=str)
def test_only_2d_parameters(shape):
    expected = _raised(lambda: torch.optim.Muon([torch.zeros(shape, requires_grad=True)]))
    assert expected[0] is ValueError and "Muon only supports 2D parameters" in expected[1]
    got = _raised(lambda: torchweb.optim.Muon([torchweb.zeros(shape, requires_grad=True)]))
    assert got == expected


def test_defaults_groups_and_repr_as_pytorch():
    kw = dict(lr=0.05, nesterov=False, adjust_lr_fn="match_rms_adamw", ns_steps=3)
    mine = torchweb.optim.Muon([torchweb.zeros(3, 4, requires_grad=True)], **kw)
    ref = torch.optim.Muon([torch.zeros(3, 4, requires_grad=True)], **kw)
    assert mine.defaults == ref.defaults
    assert mine.state_dict()["param_groups"] == ref.state_dict()["param_groups"]
    assert repr(mine) == repr(ref)
    tensor_lr = torchweb.optim.Muon([torchweb.zeros(3, 4, requires_grad=True)], lr=torchweb.tensor([0.25]))
    assert tensor_lr.param_groups[0]["lr"] == 0.25


@pytest.mark.parametrize("case", ["ns_steps=100", "two coefficients", "complex", "sparse"])
def test_errors_at_the_step_as_pytorch(case, device):
    def run(lib, dev):
        dtype = lib.complex64 if case == "complex" else lib.float32
        p = lib.ones(4, 3, dtype=dtype, device=dev, requires_grad=True)
        kw = {"ns_steps=100": dict(ns_steps=100), "two coefficients": dict(ns_coefficients=(1.0, 2.0))}.get(case, {})
        opt = lib.optim.Muon([p], **kw)
        grad = lib.ones(4, 3, dtype=dtype, device=dev)
        p.grad = grad.to_sparse() if case == "sparse" else grad
        return lambda: opt.step()
    expected = _raised(run(torch, None))
    assert expected is not None
    assert _raised(run(torchweb, device)) == expected


# -- the bfloat16 emulation ----------------------------------------------------------------------
def test_bfloat16_round_is_pytorchs_rounding(device):
    """The row rounds float32 to the nearest bfloat16 (halves to even), as PyTorch's cast:
    bit for bit but NaN's payload; its gradient passes through as the cast's does."""
    special = [0.0, -0.0, 1.0, 1.00390625, 1.01171875, 1.0078125, -2.3, 3.3895314e38, 3.4e38,
               float("inf"), float("-inf"), float("nan"), 1e-40, -1e-38, 65504.0]
    values = torch.cat([torch.tensor(special), torch.randn(5000, generator=torch.Generator().manual_seed(3)) * 100])
    got = theirs(call("bfloat16_round", ours(values, device) * 1.0))   # (a pending input, too)
    expected = values.bfloat16().float()
    if device == "webgpu":   # (a GPU may flush float32 subnormals to zero)
        keep = expected.abs() >= torch.finfo(torch.float32).tiny
        got, expected = got[keep | (expected == 0)], expected[keep | (expected == 0)]
    torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=True)
    half = ours(torch.tensor([1.0, 2.3, 65504.0, -1e-3]), device).half()
    torch.testing.assert_close(theirs(call("bfloat16_round", half)),
                               torch.tensor([1.0, 2.3, 65504.0, -1e-3]).half().bfloat16().half(), rtol=0, atol=0)
    x = ours(torch.tensor([1.1, -2.2]), device, requires_grad=True)
    (call("bfloat16_round", x) * torchweb.tensor([3.0, 4.0], device=device)).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


C = (3.4445, -4.7750, 2.0315)


@pytest.mark.parametrize("shape", [(48, 64), (64, 48), (32, 32), (10, 128), (128, 20), (1, 7), (7, 1)], ids=str)
def test_newton_schulz_matches_pytorchs_bfloat16_iteration(shape, device, monkeypatch):
    from torch.optim._muon import _zeropower_via_newtonschulz as reference
    g = torch.Generator().manual_seed(sum(shape))
    worst, unrounded = 0.0, 0.0
    for _ in range(3):
        grad = torch.randn(*shape, generator=g)
        expected = reference(grad, C, 5, 1e-7).float()
        got = muon.zeropower_via_newtonschulz(ours(grad, device), C, 5, 1e-7)
        assert got.is_contiguous() and tuple(got.shape) == shape
        got = _array(got)
        assert not (got.view(np.uint32) & 0xFFFF).any(), "every entry is a bfloat16 value"
        worst = max(worst, np.linalg.norm(got - expected.numpy()) / expected.norm().item())
        with monkeypatch.context() as m:   # (the same iteration in float32: what the rounding is for)
            m.setattr(muon, "_bf16", lambda x: x)
            plain = _array(muon.zeropower_via_newtonschulz(ours(grad, device), C, 5, 1e-7))
        unrounded = max(unrounded, np.linalg.norm(plain - expected.numpy()) / expected.norm().item())
    assert worst <= 1e-2
    assert unrounded > 1e-2


def test_newton_schulz_of_zeros_and_without_steps(device):
    from torch.optim._muon import _zeropower_via_newtonschulz as reference
    for grad, steps in ((torch.zeros(3, 5), 5), (torch.randn(6, 4), 0), (torch.randn(4, 6), 0)):
        got = muon.zeropower_via_newtonschulz(ours(grad, device), C, steps, 1e-7)
        assert got.is_contiguous()
        torch.testing.assert_close(theirs(got), reference(grad, C, steps, 1e-7).float(), rtol=0, atol=2 ** -9)


# -- training ------------------------------------------------------------------------------------
EXACT = [dict(ns_steps=0), dict(ns_steps=0, weight_decay=0.3, momentum=0.9),
         dict(ns_steps=0, nesterov=False, adjust_lr_fn="match_rms_adamw"),
         dict(ns_steps=0, adjust_lr_fn="original", weight_decay=0.0, momentum=0.0)]


@pytest.mark.parametrize("options", EXACT, ids=str)
def test_without_the_iteration_training_matches_pytorch(options, device):
    """ns_steps=0 leaves the elementwise part (momentum, nesterov, the normalization, weight
    decay, the adjusted learning rate): 20 steps as close as the other optimizers'."""
    l1, m1, _ = _train(torchweb, device, **options)
    l2, m2, _ = _train(torch, device, **options)
    torch.testing.assert_close(torch.tensor(l1), torch.tensor(l2), rtol=1e-5, atol=1e-6)
    for (n, a), (_, b) in zip(m1.named_parameters(), m2.named_parameters()):
        torch.testing.assert_close(theirs(a.detach()), b.detach(), rtol=1e-5, atol=2e-5, msg=n)


FULL = [dict(), dict(nesterov=False, adjust_lr_fn="match_rms_adamw", weight_decay=0.05)]


@pytest.mark.parametrize("options", FULL, ids=str)
def test_each_step_from_pytorchs_state_matches(options, device):
    """Every step starts from PyTorch's weights and optimizer state (its state_dicts loaded:
    the layouts are the same), so only one step's difference is measured (see the module)."""
    model, tmodel = _model(torchweb, device), _model(torch)
    opts, topts = _optimizers(torchweb, model, **options), _optimizers(torch, tmodel, **options)
    x, y = _data()
    xo, yo = ours(x, device), ours(y, device)
    for _ in range(STEPS):
        model.load_state_dict({k: ours(v, device) for k, v in tmodel.state_dict().items()})
        for o, t in zip(opts, topts):
            o.load_state_dict(_to_torchweb_state(t.state_dict(), device))
        assert _step(torchweb, model, opts, xo, yo) == pytest.approx(_step(torch, tmodel, topts, x, y), abs=1e-6)
        for (n, p), (_, q) in zip(model.named_parameters(), tmodel.named_parameters()):
            is_muon = any(p is r for r in opts[0].param_groups[0]["params"])
            atol = 2 ** -6 * _adjusted_lr(opts[0], p) if is_muon else 1e-6
            torch.testing.assert_close(theirs(p.detach()), q.detach(), rtol=0, atol=atol, msg=n)
        for p, q in zip(opts[0].param_groups[0]["params"], topts[0].param_groups[0]["params"]):
            torch.testing.assert_close(theirs(opts[0].state[p]["momentum_buffer"]), topts[0].state[q]["momentum_buffer"],
                                       rtol=0, atol=1e-6)


@pytest.mark.parametrize("options", FULL, ids=str)
def test_twenty_steps_track_pytorch(options, device):
    l1, m1, _ = _train(torchweb, device, **options)
    l2, m2, _ = _train(torch, device, **options)
    assert l2[-1] < l2[0] - 0.3   # (it learns: the curves compared are not flat)
    np.testing.assert_allclose(l1, l2, rtol=0, atol=1.5e-3)
    for (n, a), (_, b) in zip(m1.named_parameters(), m2.named_parameters()):
        b = b.detach().numpy()
        assert np.linalg.norm(_array(a) - b) <= 6e-2 * np.linalg.norm(b), n


def test_state_dict_both_ways(device):
    """torchweb's state_dict has PyTorch's layout; loaded into PyTorch's Muon (and PyTorch's
    into torchweb's), training continues the same curve (ns_steps=0: exact; see the module)."""
    options = dict(ns_steps=0, weight_decay=0.2)
    _, model, opts = _train(torchweb, device, steps=5, **options)
    _, tmodel, topts = _train(torch, device, steps=5, **options)
    sd, tsd = opts[0].state_dict(), topts[0].state_dict()
    assert list(sd["state"]) == list(tsd["state"]) == [0, 1]
    assert all(list(s) == ["momentum_buffer"] for s in sd["state"].values())
    assert sd["param_groups"] == tsd["param_groups"]
    # ours -> a fresh PyTorch pair, and PyTorch's -> a fresh torchweb pair: both continue as the originals
    tmodel2 = _model(torch)
    tmodel2.load_state_dict({k: theirs(v) for k, v in model.state_dict().items()})
    topts2 = _optimizers(torch, tmodel2, **options)
    for o, t in zip(opts, topts2):
        t.load_state_dict(_to_torch_state(o.state_dict()))
    model2 = _model(torchweb, device)
    model2.load_state_dict({k: ours(v, device) for k, v in tmodel.state_dict().items()})
    opts2 = _optimizers(torchweb, model2, **options)
    for o, t in zip(opts2, topts):
        o.load_state_dict(_to_torchweb_state(t.state_dict(), device))
    x, y = _data()
    xo, yo = ours(x, device), ours(y, device)
    for _ in range(5):
        a, b = _step(torchweb, model, opts, xo, yo), _step(torch, tmodel2, topts2, x, y)
        c, d = _step(torchweb, model2, opts2, xo, yo), _step(torch, tmodel, topts, x, y)
        assert a == pytest.approx(b, abs=1e-6) and c == pytest.approx(d, abs=1e-6)
    for (n, p), (_, q) in zip(model2.named_parameters(), tmodel.named_parameters()):
        torch.testing.assert_close(theirs(p.detach()), q.detach(), rtol=1e-5, atol=2e-5, msg=n)
