"""torchweb.optim.lr_scheduler vs torch.optim.lr_scheduler: the lr (and momentum) sequences
over 30 epochs, two parameter groups, state_dict round trips and the misuse warnings."""

import math
import warnings

import pytest
import torch

import torchweb

EPOCHS = 30


def _optimizers(name="SGD", **kwargs):
    kwargs = kwargs or (dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1))
    ours = [torchweb.zeros(2, device="cpu", requires_grad=True), torchweb.zeros(3, device="cpu", requires_grad=True)]
    theirs = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    o = getattr(torchweb.optim, name)([{"params": [ours[0]]}, {"params": [ours[1]], "lr": kwargs["lr"] * 2}], **kwargs)
    t = getattr(torch.optim, name)([{"params": [theirs[0]]}, {"params": [theirs[1]], "lr": kwargs["lr"] * 2}], **kwargs)
    for p in ours:
        p.grad = torchweb.zeros(p.shape, device="cpu")
    for p in theirs:
        p.grad = torch.zeros(p.shape)
    return o, t


def _lam(e):
    return 0.95 ** e


def _mult(e):
    return 0.9 if e % 3 else 1.0


SCHEDULERS = [
    ("StepLR", dict(step_size=7, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 8, 8, 20], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=2, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=7)),
    ("LambdaLR", dict(lr_lambda=_lam)),
    ("MultiplicativeLR", dict(lr_lambda=_mult)),
    ("LinearLR", dict(start_factor=0.25, end_factor=1.0, total_iters=8)),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("PolynomialLR", dict(total_iters=20, power=2.0)),
    ("OneCycleLR", dict(max_lr=[1.0, 2.0], total_steps=EPOCHS + 1)),
    ("OneCycleLR", dict(max_lr=1.0, epochs=3, steps_per_epoch=11, anneal_strategy="linear", three_phase=True)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=EPOCHS + 1, cycle_momentum=False, div_factor=10,
                        final_div_factor=100, pct_start=0.4)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="triangular2")),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations")),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items() if not callable(v))


def _run(lib, opt, name, kwargs, epochs=EPOCHS):
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    lrs, moms = [sched.get_last_lr()], []
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        moms.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    return lrs, moms, sched


def _close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, (list, tuple)):
            _close(x, y)
        else:
            assert x == pytest.approx(y, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("config", SCHEDULERS, ids=_ids)
def test_lr_sequence_matches_pytorch(config):
    name, kwargs = config
    o, t = _optimizers()
    ours, theirs = _run(torchweb, o, name, kwargs), _run(torch, t, name, kwargs)
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])
    assert [g["initial_lr"] for g in o.param_groups] == [g["initial_lr"] for g in t.param_groups]


@pytest.mark.parametrize("kwargs", [dict(max_lr=0.01, total_steps=EPOCHS + 1),
                                    dict(max_lr=0.01, total_steps=EPOCHS + 1, three_phase=True, base_momentum=0.5)])
def test_one_cycle_with_adam_cycles_beta1(kwargs):
    o, t = _optimizers("Adam")
    ours, theirs = _run(torchweb, o, "OneCycleLR", kwargs), _run(torch, t, "OneCycleLR", kwargs)
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])


def test_cyclic_with_adam_cycles_beta1():
    o, t = _optimizers("Adam")
    kw = dict(base_lr=0.001, max_lr=0.01, step_size_up=5)
    ours, theirs = _run(torchweb, o, "CyclicLR", kw), _run(torch, t, "CyclicLR", kw)
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])


@pytest.mark.parametrize("kwargs", [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.1, threshold_mode="abs"),
                                    dict(patience=1, cooldown=2, min_lr=[0.01, 0.03], eps=1e-3),
                                    dict(mode="min", threshold_mode="rel", patience=0, factor=0.7)])
def test_reduce_lr_on_plateau(kwargs):
    o, t = _optimizers()
    s1 = torchweb.optim.lr_scheduler.ReduceLROnPlateau(o, **kwargs)
    s2 = torch.optim.lr_scheduler.ReduceLROnPlateau(t, **kwargs)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.5, 0.5, 0.49, 0.49, 0.49, 0.49, 0.6] * 3
    for m in metrics:
        o.step()
        t.step()
        s1.step(m)
        s2.step(m)
        _close(s1.get_last_lr(), s2.get_last_lr())
        assert [g["lr"] for g in o.param_groups] == pytest.approx([g["lr"] for g in t.param_groups])
    assert s1.num_bad_epochs == s2.num_bad_epochs and s1.best == s2.best


def _sequential(lib, opt):
    s = lib.optim.lr_scheduler
    a = s.LinearLR(opt, start_factor=0.1, total_iters=5)
    b = s.CosineAnnealingLR(opt, T_max=10)
    c = s.ExponentialLR(opt, gamma=0.9)
    return s.SequentialLR(opt, schedulers=[a, b, c], milestones=[5, 15])


def _chained(lib, opt):
    s = lib.optim.lr_scheduler
    return s.ChainedScheduler([s.ConstantLR(opt, factor=0.5, total_iters=6), s.ExponentialLR(opt, gamma=0.9),
                               s.StepLR(opt, step_size=4, gamma=0.5)])


@pytest.mark.parametrize("make", [_sequential, _chained], ids=["SequentialLR", "ChainedScheduler"])
def test_composed_schedulers(make):
    o, t = _optimizers()
    s1, s2 = make(torchweb, o), make(torch, t)
    for _ in range(EPOCHS):
        o.step()
        t.step()
        s1.step()
        s2.step()
        _close(s1.get_last_lr(), s2.get_last_lr())


@pytest.mark.parametrize("config", [SCHEDULERS[i] for i in (0, 3, 4, 6, 11, 14)], ids=_ids)
def test_state_dict_round_trip(config):
    name, kwargs = config
    o, t = _optimizers()
    _, _, sched = _run(torchweb, o, name, kwargs, epochs=12)
    _, _, tsched = _run(torch, t, name, kwargs, epochs=12)
    sd = sched.state_dict()
    tsd = tsched.state_dict()
    assert sorted(sd) == sorted(tsd)
    for k in ("last_epoch", "_step_count", "base_lrs", "_last_lr"):
        assert sd[k] == pytest.approx(tsd[k])
    # resume: a fresh optimizer and scheduler loaded from the checkpoints continue the sequence
    o2, _ = _optimizers()
    o2.load_state_dict(o.state_dict())
    s2 = getattr(torchweb.optim.lr_scheduler, name)(o2, **kwargs)
    s2.load_state_dict(sd)
    for _ in range(10):
        o2.step()
        t.step()
        s2.step()
        tsched.step()
        _close(s2.get_last_lr(), tsched.get_last_lr())


def test_closed_form_with_epoch_argument():
    o, t = _optimizers()
    s1 = torchweb.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)
    s2 = torch.optim.lr_scheduler.StepLR(t, step_size=3, gamma=0.5)
    o.step()
    t.step()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s1.step(7)
        s2.step(7)
    _close(s1.get_last_lr(), s2.get_last_lr())


def test_warns_when_scheduler_steps_before_optimizer():
    o, _ = _optimizers()
    s = torchweb.optim.lr_scheduler.StepLR(o, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()


def test_bad_input_like_pytorch():
    o, t = _optimizers()
    for lib, opt in ((torchweb, o), (torch, t)):
        with pytest.raises(TypeError, match="is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR(object(), step_size=2)
        with pytest.raises(KeyError, match="initial_lr"):
            lib.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)
        with pytest.raises(ValueError):
            lib.optim.lr_scheduler.LambdaLR(opt, lr_lambda=[_lam])
        with pytest.raises(ValueError):
            lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.5)
        with pytest.raises(ValueError):
            lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0)
        with pytest.raises(ValueError):
            lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="bad")


def test_lr_used_by_the_optimizer_step():
    """The scheduled lr is the one the next step uses (the fused kernel reads it each step)."""
    p = torchweb.ones(3, device="cpu", requires_grad=True)
    opt = torchweb.optim.SGD([p], lr=1.0)
    sched = torchweb.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    expect = 1.0
    for k in range(4):
        p.grad = torchweb.ones(3, device="cpu")
        opt.step()
        expect -= 0.5 ** k
        sched.step()
        assert p.tolist() == pytest.approx([expect] * 3)
    assert math.isclose(opt.param_groups[0]["lr"], 0.5 ** 4)


def test_module_level_bisect_right_as_pytorch():
    # torch.optim.lr_scheduler re-exports bisect.bisect_right (MultiStepLR's milestones use it)
    import torch
    import torchweb
    for xs, v in (([1, 3, 3, 7], 3), ([], 0), ([2, 4], 5)):
        assert torchweb.optim.lr_scheduler.bisect_right(xs, v) == torch.optim.lr_scheduler.bisect_right(xs, v)
