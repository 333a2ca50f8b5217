"""torchweb.optim.LBFGS vs torch.optim.LBFGS: the MLP of test_optim.py optimized from the same
weights for a few steps (fixed step and strong-Wolfe line search, short histories, early
stops) on both devices: losses, parameters, the decisions taken (func_evals, n_iter) and the
state_dict; the closure and bad options as PyTorch's."""

import copy

import pytest
import torch

import torchweb
from oracle import ours, theirs
from test_optim import _data, _loss, _mk

CONFIGS = [
    dict(),
    dict(lr=0.5, max_iter=5, history_size=3),
    dict(line_search_fn="strong_wolfe"),
    dict(lr=0.8, max_iter=4, max_eval=6, history_size=2, line_search_fn="strong_wolfe"),
    dict(tolerance_grad=1e-2, tolerance_change=1e-3),
]


def _run(lib, kwargs, device, steps=2, params=None, opt=None):
    pv, x, y = _data()
    if lib is not torch:
        x, y = ours(x, device), ours(y, device)
    params = params if params is not None else _mk(lib, pv, device)
    opt = opt if opt is not None else lib.optim.LBFGS(params, **kwargs)
    calls = []

    def closure():
        opt.zero_grad()
        loss = _loss(lib, params, x, y)
        loss.backward()
        calls.append(1)
        return loss
    losses = [opt.step(closure).item() for _ in range(steps)]
    return losses, params, opt, len(calls)


def _close(a, b, tol):
    torch.testing.assert_close(theirs(a.detach()) if isinstance(a, torchweb.Tensor) else torch.tensor(a),
                               b.detach() if isinstance(b, torch.Tensor) else torch.tensor(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "defaults")
def test_lbfgs_matches_pytorch(kwargs, device):
    """One step of 20 iterations (the default) or three short ones: the same decisions, and
    float32 rounding differences not yet amplified (over 40 iterations, PyTorch's own float64
    run of this problem drifts from its float32 run by 3e-4)."""
    steps = 3 if "max_iter" in kwargs else 1
    (l1, p1, o1, n1), (l2, p2, o2, n2) = _run(torchweb, kwargs, device, steps), _run(torch, kwargs, device, steps)
    assert n1 == n2   # (the same evaluations: the same decisions)
    _close(l1, l2, 1e-4)
    for a, b in zip(p1, p2):
        _close(a, b, 1e-4)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    st1, st2 = s1["state"][0], s2["state"][0]
    assert list(st1) == list(st2)
    assert st1["func_evals"] == st2["func_evals"] and st1["n_iter"] == st2["n_iter"]
    assert len(st1["old_dirs"]) == len(st2["old_dirs"])
    for k in ("d", "prev_flat_grad", "t", "H_diag"):
        _close(st1[k], st2[k], 1e-3)


def test_lbfgs_state_dict_round_trip(device):
    kwargs = dict(lr=0.5, max_iter=4, history_size=3)
    _, params, opt, _ = _run(torchweb, kwargs, device, steps=2)
    _, tparams, topt, _ = _run(torch, kwargs, device, steps=2)
    saved = copy.deepcopy(opt.state_dict())
    copies = [ours(theirs(p.detach()), device, requires_grad=True) for p in params]
    fresh = torchweb.optim.LBFGS(copies, **kwargs)
    fresh.load_state_dict(saved)
    l1, p1, o1, _ = _run(torchweb, kwargs, device, steps=2, params=copies, opt=fresh)
    l2, p2, o2, _ = _run(torch, kwargs, device, steps=2, params=tparams, opt=topt)
    _close(l1, l2, 1e-4)
    for a, b in zip(p1, p2):
        _close(a, b, 1e-4)
    assert o1.state_dict()["state"][0]["n_iter"] == o2.state_dict()["state"][0]["n_iter"] == 16


def test_lbfgs_returns_at_once_when_already_optimal(device):
    p = torchweb.ones(3, device=device, requires_grad=True)
    opt = torchweb.optim.LBFGS([p])
    calls = []

    def closure():
        opt.zero_grad()
        loss = (p * 0).sum()
        loss.backward()
        calls.append(1)
        return loss
    assert opt.step(closure).item() == 0.0 and calls == [1] and p.tolist() == [1.0] * 3
    assert dict(opt.state[p]) == {"func_evals": 1, "n_iter": 0}


def _error(lib, make, *args):
    try:
        make(lib, *args)
    except Exception as e:  # noqa: BLE001  (comparing exception types and messages)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", ["groups", "lr", "line search", "no closure"])
def test_lbfgs_errors_match_pytorch(case):
    def make(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        if case == "groups":
            return lib.optim.LBFGS([{"params": [a]}, {"params": [b], "lr": 0.1}])
        if case == "lr":
            return lib.optim.LBFGS([a], lr=-1.0)
        opt = lib.optim.LBFGS([a], line_search_fn="backtracking" if case == "line search" else None)

        def closure():
            opt.zero_grad()
            loss = (a * a).sum()
            loss.backward()
            return loss
        return opt.step(closure) if case == "line search" else opt.step()
    got, exp = _error(torchweb, make), _error(torch, make)
    assert exp is not None and got is not None and got[0] is exp[0]
    if case != "no closure":   # (a TypeError naming the method: the qualified names differ)
        assert got[1] == exp[1]


def test_time_sequence_prediction_loop_in_float32(device):
    """examples/time_sequence_prediction's training loop (LSTMCells and a Linear, MSELoss, LBFGS
    lr=0.8 with a closure over model.parameters()) in float32: the corpus runs the program
    itself in float64, which torchweb's layers refuse."""
    g = torch.Generator().manual_seed(0)
    t = torch.arange(12.0)
    data = torch.stack([torch.sin((t + 3 * k) / 4.0) for k in range(4)])

    def build(lib):
        return lib.nn.ModuleList([lib.nn.LSTMCell(1, 6), lib.nn.Linear(6, 1)])
    tm, m = build(torch), build(torchweb).to(device)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    m.load_state_dict({k: ours(v, device) for k, v in tm.state_dict().items()})

    def forward(lib, model, x):
        h = c = lib.zeros(x.shape[0], 6, device=x.device)
        outs = []
        for x_t in x.split(1, dim=1):
            h, c = model[0](x_t, (h, c))
            outs.append(model[1](h))
        return lib.cat(outs, dim=1)

    def train(lib, model, x, y):
        opt = lib.optim.LBFGS(model.parameters(), lr=0.8, max_iter=5)
        losses = []
        for _ in range(2):
            def closure():
                opt.zero_grad()
                loss = lib.nn.MSELoss()(forward(lib, model, x), y)
                loss.backward()
                return loss
            losses.append(opt.step(closure).item())
        return losses
    mine = train(torchweb, m, ours(data[:, :-1], device), ours(data[:, 1:], device))
    ref = train(torch, tm, data[:, :-1], data[:, 1:])
    _close(mine, ref, 1e-4)
    for (k, v), (_, w) in zip(m.state_dict().items(), tm.state_dict().items()):
        _close(v, w, 1e-4)
