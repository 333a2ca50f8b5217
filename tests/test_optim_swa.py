"""torchweb.optim.swa_utils vs torch.optim.swa_utils: AveragedModel (SWA by default, EMA through
avg_fn or multi_avg_fn, use_buffers) averaged over a short SGD run from the same weights on
both devices, update_bn's recomputed BatchNorm statistics, SWALR's learning rates, and the bad
options' errors."""

import pytest
import torch

import torchweb
from oracle import ours, theirs


def _pair(device):
    g = torch.Generator().manual_seed(11)

    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.ReLU(), lib.nn.Linear(6, 2))
    tm, m = build(torch), build(torchweb).to(device)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    m.load_state_dict({k: ours(v, device) for k, v in tm.state_dict().items()})
    xs = [torch.randn(8, 4, generator=g) for _ in range(5)]
    return m, tm, xs


def _same_state(a, b, tol=1e-5):
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sb:
        assert sa[k].dtype.name == str(sb[k].dtype).replace("torch.", ""), k
        torch.testing.assert_close(theirs(sa[k]), sb[k], rtol=tol, atol=tol, msg=k)


def _fns(lib, kind):
    su = lib.optim.swa_utils
    return {"swa": {}, "ema avg_fn": dict(avg_fn=su.get_ema_avg_fn(0.9)),
            "ema multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
            "swa multi": dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
            "swa avg_fn": dict(avg_fn=su.get_swa_avg_fn()),
            "ema multi buffers": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8), use_buffers=True),
            "swa buffers": dict(use_buffers=True)}[kind]


@pytest.mark.parametrize("kind", ["swa", "ema avg_fn", "ema multi", "swa multi", "swa avg_fn", "ema multi buffers",
                                  "swa buffers"])
def test_averaged_model_matches_pytorch(kind, device):
    m, tm, xs = _pair(device)
    avg, tavg = torchweb.optim.swa_utils.AveragedModel(m, **_fns(torchweb, kind)), \
        torch.optim.swa_utils.AveragedModel(tm, **_fns(torch, kind))
    opt, topt = torchweb.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(tm.parameters(), lr=0.1)
    for x in xs:
        for lib, model, o, a, inp in ((torchweb, m, opt, avg, ours(x, device)), (torch, tm, topt, tavg, x)):
            o.zero_grad()
            model(inp).square().mean().backward()
            o.step()
            a.update_parameters(model)
    assert avg.n_averaged.item() == tavg.n_averaged.item() == len(xs) and avg.n_averaged.dtype == torchweb.int64
    _same_state(avg, tavg)
    # the averaged model runs the module's forward
    x = xs[0]
    avg.eval()
    tavg.eval()
    torch.testing.assert_close(theirs(avg(ours(x, device)).detach()), tavg(x).detach(), rtol=1e-5, atol=1e-5)


def test_update_bn_matches_pytorch(device):
    m, tm, xs = _pair(device)
    m.eval()
    tm.eval()
    momentum = m[1].momentum
    loader = [(ours(x, device), 0) for x in xs[:3]] + [ours(x, device) for x in xs[3:]]
    torchweb.optim.swa_utils.update_bn(loader, m)
    torch.optim.swa_utils.update_bn([(x, 0) for x in xs[:3]] + xs[3:], tm)
    assert not m.training and m[1].momentum == momentum
    assert m[1].num_batches_tracked.item() == tm[1].num_batches_tracked.item() == len(xs)
    _same_state(m, tm)
    # a model without BatchNorm: nothing happens
    lin = torchweb.nn.Linear(2, 2)
    torchweb.optim.swa_utils.update_bn([torchweb.ones(1, 2)], lin)


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3, anneal_strategy="linear"),
                                    dict(swa_lr=0.01, anneal_epochs=0), dict(swa_lr=0.3, anneal_epochs=4)])
def test_swalr_matches_pytorch(kwargs):
    def run(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
        lrs = [sched.get_last_lr()]
        for _ in range(12):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs, sched, opt
    mine, sched, _ = run(torchweb)
    ref, tsched, _ = run(torch)
    assert mine == ref   # (the same Python arithmetic)
    sd, tsd = sched.state_dict(), tsched.state_dict()
    assert sd == tsd
    # a fresh scheduler loads the state and goes on the same way
    _, fresh, opt = run(torchweb)
    fresh.load_state_dict(sd)
    opt.step()
    fresh.step()
    tsched.optimizer.step()
    tsched.step()
    assert fresh.get_last_lr() == tsched.get_last_lr()


def _error(lib, case):
    su = lib.optim.swa_utils
    p = lib.zeros(2, requires_grad=True)
    try:
        if case == "two fns":
            su.AveragedModel(lib.nn.Linear(2, 2), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())
        elif case == "ema decay":
            su.get_ema_avg_fn(1.5)
        elif case == "ema multi decay":
            su.get_ema_multi_avg_fn(-0.1)
        elif case == "strategy":
            su.SWALR(lib.optim.SGD([p], lr=0.1), swa_lr=0.05, anneal_strategy="exp")
        elif case == "epochs":
            su.SWALR(lib.optim.SGD([p], lr=0.1), swa_lr=0.05, anneal_epochs=-1)
        elif case == "swa_lr length":
            su.SWALR(lib.optim.SGD([p], lr=0.1), swa_lr=[0.05, 0.1])
    except Exception as e:  # noqa: BLE001  (comparing exception types and messages)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", ["two fns", "ema decay", "ema multi decay", "strategy", "epochs", "swa_lr length"])
def test_bad_options_raise_like_pytorch(case):
    exp = _error(torch, case)
    assert exp is not None and _error(torchweb, case) == exp
