"""torchweb.optim vs torch.optim: a small raw-tensor MLP trained 20 steps from the same weights
and data on both devices (loss curves and final parameters), state_dict layout and round trips,
parameter groups, bad input, non-contiguous and float16 parameters, one kernel per parameter."""

import copy
import warnings

import pytest
import torch

import torchweb
from oracle import ours, theirs

STEPS = 20

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, foreach=False, capturable=False)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.5, amsgrad=True, betas=(0.6, 0.9))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, alpha=0.9, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.01)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, betas=(0.5, 0.9))),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.9, 0.9))),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.02), maximize=True, foreach=False)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=5, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=0.5 + 1.0, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.02, maximize=True, foreach=False)),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


def _data():
    g = torch.Generator().manual_seed(0)
    params = [torch.randn(4, 8, generator=g) * 0.5, torch.randn(8, generator=g) * 0.1,
              torch.randn(8, 3, generator=g) * 0.5]
    x = torch.randn(16, 4, generator=g)
    y = torch.randn(16, 3, generator=g)
    return params, x, y


def _loss(lib, params, x, y):
    w1, b1, w2 = params
    return ((lib.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()


def _mk(lib, values, device, dtype=torch.float32):
    if lib is torch:
        return [v.clone().to(dtype).requires_grad_(True) for v in values]
    return [ours(v.to(dtype), device, requires_grad=True) for v in values]


def _train(lib, name, kwargs, device, steps=STEPS, groups=None, params=None, opt=None, dtype=torch.float32):
    pv, x, y = _data()
    x, y = x.to(dtype), y.to(dtype)
    if lib is not torch:
        x, y = ours(x, device), ours(y, device)
    if params is None:
        params = _mk(lib, pv, device)
    if opt is None:
        spec = params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
        opt = getattr(lib.optim, name)(spec, **kwargs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = _loss(lib, params, x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, params, opt


def _compare(ours_run, theirs_run, rtol=1e-5, atol=1e-6):
    (l1, p1, _), (l2, p2, _) = ours_run, theirs_run
    torch.testing.assert_close(torch.tensor(l1), torch.tensor(l2), rtol=rtol, atol=atol)
    for a, b in zip(p1, p2):
        torch.testing.assert_close(theirs(a.detach()), b.detach(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_training_matches_pytorch(config, device):
    name, kwargs = config
    _compare(_train(torchweb, name, kwargs, device), _train(torch, name, kwargs, device))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "NAdam"])
def test_param_groups_with_their_own_options(name, device):
    groups = [{"params": [0, 1], "lr": 0.05}, {"params": [2], "lr": 0.002, "weight_decay": 0.1}]
    kwargs = dict(lr=0.01, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.01)
    a = _train(torchweb, name, kwargs, device, groups=groups)
    b = _train(torch, name, kwargs, device, groups=groups)
    _compare(a, b)
    assert [g["lr"] for g in a[2].param_groups] == [0.05, 0.002]


def _clone_state(sd):
    """A copy of a torchweb state_dict with fresh tensors (what torch.save/load gives)."""
    def c(v):
        if isinstance(v, torchweb.Tensor):
            return v.detach().clone()
        if isinstance(v, dict):
            return {k: c(x) for k, x in v.items()}
        return copy.deepcopy(v)
    return {"state": {k: c(v) for k, v in sd["state"].items()}, "param_groups": copy.deepcopy(sd["param_groups"])}


def _to_torchweb_state(sd, device):
    def c(k, v):
        if isinstance(v, torch.Tensor):
            return ours(v, "cpu" if k == "step" else device)
        return v
    return {"state": {i: {k: c(k, v) for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


@pytest.mark.parametrize("config", [c for i, c in enumerate(CONFIGS) if i in (2, 6, 10, 12, 15, 17, 19, 22, 25, 27, 29, 31)], ids=_ids)
def test_state_dict_layout_and_round_trip(config, device):
    name, kwargs = config
    half = STEPS // 2
    _, params, opt = _train(torchweb, name, kwargs, device, steps=half)
    _, tparams, topt = _train(torch, name, kwargs, device, steps=half)
    sd, tsd = opt.state_dict(), topt.state_dict()
    # PyTorch's layout: state keyed by parameter index, groups with the options and "params"
    assert list(sd["state"].keys()) == list(tsd["state"].keys())
    for i in tsd["state"]:
        assert list(sd["state"][i].keys()) == list(tsd["state"][i].keys())
        for k, v in tsd["state"][i].items():
            got = sd["state"][i][k]
            assert got.dtype.name == str(v.dtype).replace("torch.", "") and tuple(got.shape) == tuple(v.shape)
            if k == "step":
                assert got.dim() == 0 and got.item() == v.item() == half
            else:
                torch.testing.assert_close(theirs(got), v, rtol=1e-4, atol=1e-5)
    assert sd["param_groups"] == tsd["param_groups"]
    # a fresh optimizer over copies of the parameters, loaded mid-training, continues the curve
    saved = _clone_state(sd)
    copies = [ours(theirs(p.detach()), device, requires_grad=True) for p in params]
    fresh = getattr(torchweb.optim, name)(copies, **kwargs)
    fresh.load_state_dict(saved)
    cont = _train(torchweb, name, kwargs, device, steps=half, params=copies, opt=fresh)
    tcont = _train(torch, name, kwargs, device, steps=half, params=tparams, opt=topt)
    _compare(cont, tcont)
    # and a PyTorch checkpoint loads into torchweb and continues the same way
    tparams2 = [ours(p.detach(), device, requires_grad=True) for p in _train(torch, name, kwargs, device, steps=half)[1]]
    topt2 = _train(torch, name, kwargs, device, steps=half)[2]
    opt2 = getattr(torchweb.optim, name)(tparams2, **kwargs)
    opt2.load_state_dict(_to_torchweb_state(topt2.state_dict(), device))
    _compare(_train(torchweb, name, kwargs, device, steps=half, params=tparams2, opt=opt2), tcont)


def test_state_dict_of_sgd_without_momentum_is_empty(device):
    _, _, opt = _train(torchweb, "SGD", dict(lr=0.1), device, steps=2)
    _, _, topt = _train(torch, "SGD", dict(lr=0.1), device, steps=2)
    assert opt.state_dict()["state"] == topt.state_dict()["state"] == {}
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                                  "Rprop", "ASGD", "SparseAdam", "Adafactor"])
def test_repr_and_defaults_match_pytorch(name):
    p = torchweb.zeros(2, device="cpu", requires_grad=True)
    tp = torch.zeros(2, requires_grad=True)
    kwargs = dict(lr=0.1) if name == "SGD" else {}
    assert repr(getattr(torchweb.optim, name)([p], **kwargs)) == repr(getattr(torch.optim, name)([tp], **kwargs))


def test_load_state_dict_checks_groups():
    a, b = torchweb.zeros(2, device="cpu", requires_grad=True), torchweb.zeros(2, device="cpu", requires_grad=True)
    opt = torchweb.optim.Adam([a, b])
    two = torchweb.optim.Adam([{"params": [a]}, {"params": [b]}])
    one = torchweb.optim.Adam([a])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(two.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(one.state_dict())


def test_load_state_dict_casts_state_to_the_parameter(device):
    p = torchweb.zeros(3, device=device, requires_grad=True)
    opt = torchweb.optim.SGD([p], lr=0.1, momentum=0.9)
    sd = {"state": {0: {"momentum_buffer": torchweb.ones(3, dtype=torchweb.float16, device="cpu")}},
          "param_groups": opt.state_dict()["param_groups"]}
    opt.load_state_dict(sd)
    buf = opt.state[p]["momentum_buffer"]
    assert buf.dtype == torchweb.float32 and buf.device.type == device


def _bad(lib, name, *args, **kwargs):
    try:
        getattr(lib.optim, name)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001  (comparing exception types and messages)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    ("SGD", dict(lr=-0.1)), ("SGD", dict(lr=0.1, momentum=-1)), ("SGD", dict(lr=0.1, weight_decay=-1)),
    ("SGD", dict(lr=0.1, nesterov=True)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
    ("Adam", dict(lr=-1.0)), ("Adam", dict(betas=(1.0, 0.9))), ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(eps=-1.0)), ("AdamW", dict(weight_decay=-1.0)), ("RMSprop", dict(alpha=-1.0)),
    ("RMSprop", dict(momentum=-1.0)), ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)), ("Adadelta", dict(rho=1.5)),
    ("Adamax", dict(lr=-1.0)), ("NAdam", dict(momentum_decay=-1.0)), ("RAdam", dict(eps=-1.0)),
    ("Adam", dict(fused=True, differentiable=True)),
    ("Rprop", dict(lr=-1.0)), ("Rprop", dict(etas=(1.0, 1.2))), ("Rprop", dict(etas=(0.5, 1.0))),
    ("ASGD", dict(lr=-1.0)), ("ASGD", dict(weight_decay=-1.0)),
    ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)), ("SparseAdam", dict(betas=(0.9, 1.0))),
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))), ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
], ids=lambda c: c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items()))
def test_bad_options_raise_like_pytorch(case):
    name, kwargs = case
    got = _bad(torchweb, name, [torchweb.zeros(2, device="cpu", requires_grad=True)], **kwargs)
    exp = _bad(torch, name, [torch.zeros(2, requires_grad=True)], **kwargs)
    assert exp is not None and got == exp


def test_bad_params_raise_like_pytorch():
    p = torchweb.zeros(2, device="cpu", requires_grad=True)
    tp = torch.zeros(2, requires_grad=True)
    for ours_params, their_params in [
            (p, tp),                                                  # a tensor, not an iterable
            ([], []),                                                 # empty
            ([p * 2], [tp * 2]),                                      # non-leaf
            ([{"params": [p]}, {"params": [p]}], [{"params": [tp]}, {"params": [tp]}]),  # duplicate
            ([1.0], [1.0]),                                           # not a tensor
            ([{"params": {p}}], [{"params": {tp}}])]:                 # a set
        got, exp = _bad(torchweb, "SGD", ours_params, lr=0.1), _bad(torch, "SGD", their_params, lr=0.1)
        assert exp is not None and got is not None and got[0] is exp[0], (got, exp)
        if "Tensor" not in exp[1]:
            assert got[1] == exp[1]
    with pytest.warns(UserWarning, match="duplicate parameters"):
        torchweb.optim.SGD([p, p], lr=0.1)


def test_add_param_group_zero_grad_closure_and_hooks(device):
    a = torchweb.ones(3, device=device, requires_grad=True)
    b = torchweb.ones(2, device=device, requires_grad=True)
    opt = torchweb.optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))

    def closure():
        opt.zero_grad()
        loss = (a * a).sum() + (b * 3).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 9.0 and calls == ["pre", "post"]
    assert a.tolist() == pytest.approx([0.8] * 3) and b.tolist() == pytest.approx([-0.5] * 2)
    h1.remove()
    opt.step(closure)
    assert calls == ["pre", "post", "post"]
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0] * 3
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    opt.step()   # no gradients: nothing happens


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9)),
                                         ("Rprop", dict(lr=0.01)), ("ASGD", dict(lr=0.05, t0=1)),
                                         ("Adafactor", dict(lr=0.05))])
def test_non_contiguous_parameters(name, kwargs, device):
    g = torch.Generator().manual_seed(3)
    base = torch.randn(6, 5, generator=g)
    grads = [torch.randn(5, 6, generator=g) for _ in range(3)]
    tp = base.t().detach().requires_grad_(True)     # a transposed leaf
    p = ours(base, device).t().detach().requires_grad_(True)
    assert not p.is_contiguous()
    topt, opt = getattr(torch.optim, name)([tp], **kwargs), getattr(torchweb.optim, name)([p], **kwargs)
    for gr in grads:
        tp.grad = gr.clone()
        p.grad = ours(gr.t(), device).t()            # a non-contiguous gradient too
        topt.step()
        opt.step()
    torch.testing.assert_close(theirs(p.detach()), tp.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, eps=1e-3)),
                                         ("Adagrad", dict(lr=0.1)), ("Rprop", dict(lr=0.01)),
                                         ("ASGD", dict(lr=0.05, t0=3))])
def test_float16_parameters(name, kwargs, device):
    """float16 is computed in float32 and stored once per step (PyTorch rounds after each op):
    close to PyTorch's float16 run, state kept in float16. (Adam's default eps, 1e-8, is 0 in
    float16: PyTorch's half steps then divide by zero where a gradient is 0, ours do not.)"""
    if device == "webgpu":
        from torchweb.backends.webgpu.runtime import get_runtime
        if "shader-f16" not in get_runtime().features:
            pytest.skip("adapter without shader-f16")
    h = torch.float16
    a = _train(torchweb, name, kwargs, device, steps=10, params=_mk(torchweb, _data()[0], device, h), dtype=h)
    b = _train(torch, name, kwargs, device, steps=10, params=_mk(torch, _data()[0], device, h), dtype=h)
    for p in a[1]:
        assert p.dtype == torchweb.float16
    for s in a[2].state.values():
        for k, v in s.items():
            if k not in ("step", "eta", "mu"):   # (0-d float32 counters, as PyTorch's)
                assert v.dtype == torchweb.float16
    torch.testing.assert_close(torch.tensor(a[0]), torch.tensor(b[0]), rtol=2e-2, atol=2e-3)
    for x, y in zip(a[1], b[1]):
        torch.testing.assert_close(theirs(x.detach()).float(), y.detach().float(), rtol=5e-2, atol=5e-2)


def test_one_kernel_per_parameter(monkeypatch):
    """The webgpu step is one dispatch per parameter, whatever the optimizer's options, the
    first step included (new state is read as zeros by the kernel, never filled first)."""
    from torchweb.backends.webgpu import runtime as RT
    rt = RT.get_runtime()
    # (no flush by time: a slow pipeline compile would start a new stream, and its count, mid-step)
    monkeypatch.setattr(RT, "FLUSH_AFTER_S", float("inf"))
    for name, kwargs in [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
                         ("Adam", dict(amsgrad=True, weight_decay=0.1)), ("AdamW", {}),
                         ("RMSprop", dict(centered=True, momentum=0.9)), ("Adagrad", {}), ("Adadelta", {}),
                         ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Rprop", {}),
                         ("ASGD", dict(t0=0, weight_decay=0.1))]:
        params = [torchweb.ones(5, 3, device="webgpu", requires_grad=True), torchweb.ones(3, device="webgpu", requires_grad=True)]
        for p in params:
            p.grad = torchweb.full(p.shape, 0.5, device="webgpu")
        opt = getattr(torchweb.optim, name)(params, **kwargs)
        for _ in range(2):
            torchweb.webgpu.synchronize()   # the inputs' own kernels (fills) done: count the step's
            before = rt.stream.dispatches
            opt.step()
            assert rt.stream.dispatches - before == len(params), name


def test_pipeline_compiled_once():
    """Scalars that change every step (bias corrections, lr) travel in the uniform."""
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    p = torchweb.ones(4, device="webgpu", requires_grad=True)
    p.grad = torchweb.ones(4, device="webgpu")
    opt = torchweb.optim.Adam([p], lr=0.1)
    opt.step()   # (the first step's kernel also writes the new state's zeros: its own pipeline)
    opt.step()
    n = len(rt._pipelines)
    for i in range(5):
        opt.param_groups[0]["lr"] = 0.1 / (i + 2)
        opt.step()
    assert len(rt._pipelines) == n


def test_grid_past_65535_workgroups():
    """A parameter of more than 65535 * 256 elements: the grid folds into two dimensions."""
    n = 65535 * 256 + 300
    p = torchweb.zeros(n, device="webgpu", requires_grad=True)
    p.grad = torchweb.ones(n, device="webgpu")
    opt = torchweb.optim.SGD([p], lr=0.25)
    opt.step()
    a = p.detach().numpy()
    assert a.shape == (n,) and (a == -0.25).all()


def test_step_counter_is_a_float32_0d_tensor(device):
    p = torchweb.ones(2, device=device, requires_grad=True)
    p.grad = torchweb.ones(2, device=device)
    opt = torchweb.optim.Adam([p])
    for _ in range(3):
        opt.step()
    step = opt.state[p]["step"]
    assert step.dtype == torchweb.float32 and step.dim() == 0 and step.item() == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.state_dict()


def _models(device):
    g = torch.Generator().manual_seed(5)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    m = torchweb.nn.Sequential(torchweb.nn.Linear(4, 8), torchweb.nn.Tanh(), torchweb.nn.Linear(8, 3)).to(device)
    m.load_state_dict({k: ours(v, device) for k, v in tm.state_dict().items()})
    return m, tm


@pytest.mark.parametrize("name,kwargs", [("AdamW", dict(lr=0.01)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True))])
def test_nn_module_parameters(name, kwargs, device):
    """model.parameters() (a generator of nn.Parameter) as PyTorch scripts pass it."""
    m, tm = _models(device)
    _, x, y = _data()
    opt, topt = getattr(torchweb.optim, name)(m.parameters(), **kwargs), getattr(torch.optim, name)(tm.parameters(), **kwargs)
    xo, yo = ours(x, device), ours(y, device)
    for _ in range(10):
        opt.zero_grad()
        topt.zero_grad()
        loss = ((m(xo) - yo) ** 2).mean()
        tloss = ((tm(x) - y) ** 2).mean()
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5, abs=1e-6)
    for (k, v), (tk, tv) in zip(m.state_dict().items(), tm.state_dict().items()):
        assert k == tk
        torch.testing.assert_close(theirs(v), tv, rtol=1e-5, atol=1e-6)


def test_subclass_calling_super_step_runs_hooks_once():
    class Clipped(torchweb.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = torchweb.ones(2, device="cpu", requires_grad=True)
    p.grad = torchweb.ones(2, device="cpu")
    opt = Clipped([p], lr=0.5)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.step()
    assert calls == ["pre", "post"] and p.tolist() == [0.5, 0.5]


def test_without_numpy_the_step_lives_on_the_parameters_device(monkeypatch):
    """Pyodide without numpy: step and mu_product are 0-d tensors on the webgpu device, written
    by uploads (no kernel, no readback), and the numbers do not change."""
    from torchweb.optim import optimizer as O
    a = _train(torchweb, "NAdam", dict(lr=0.01), "webgpu", steps=5)
    monkeypatch.setattr(O, "_HAS_NUMPY", [False])
    b = _train(torchweb, "NAdam", dict(lr=0.01), "webgpu", steps=5)
    assert a[0] == b[0]
    for s in b[2].state.values():
        assert s["step"].device.type == "webgpu" and s["mu_product"].device.type == "webgpu"
        assert s["step"].item() == 5.0
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    reads = []
    monkeypatch.setattr(rt.driver, "read", lambda *args: reads.append(args))
    rt.flush()
    before = rt.stream.dispatches
    b[2].step()
    assert rt.stream.dispatches - before == 3 and reads == []


def test_without_numpy_the_step_tensors_keep_their_buffers(monkeypatch):
    """The webgpu step tensors are written in place, as PyTorch's `step += 1`: a fresh one a
    step took the buffer another's had freed, so the pool's small buffers changed places every
    step and each step bound new combinations of them (the page's soak_gpt grew its bind-group
    cache). The same tensors, the same buffers, PyTorch's counts."""
    from torchweb.optim import optimizer as O
    monkeypatch.setattr(O, "_HAS_NUMPY", [False])
    ref = _train(torch, "Adam", dict(lr=0.01), None, steps=3)
    b = _train(torchweb, "Adam", dict(lr=0.01), "webgpu", steps=3)
    held = [(s["step"], s["step"]._storage._buffer_id) for s in b[2].state.values()]
    assert held and all(t.device.type == "webgpu" for t, _ in held)
    for p in b[1]:
        p.grad = torchweb.ones_like(p)
    b[2].step()
    for p in ref[1]:
        p.grad = torch.ones_like(p)
    ref[2].step()
    steps = [s["step"] for s in ref[2].state.values()]
    assert [(s["step"], s["step"]._storage._buffer_id) for s in b[2].state.values()] == held
    assert [t.item() for t, _ in held] == [s.item() for s in steps] == [4.0] * len(held)
    _compare(b, ref)   # (the bias corrections read the counts written in place)


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.05, betas=(0.8, 0.9), eps=1e-4, maximize=True)])
def test_sparse_adam_matches_pytorch(kwargs, device):
    """Sparse COO gradients of an embedding table (rows picked with repeats: coalesced first),
    two parameters, one of them 1-D with sparse entries; a step with an empty gradient skips."""
    g = torch.Generator().manual_seed(7)
    w, v = torch.randn(10, 4, generator=g), torch.randn(6, generator=g)
    tp = [w.clone().requires_grad_(True), v.clone().requires_grad_(True)]
    p = [ours(w, device, requires_grad=True), ours(v, device, requires_grad=True)]
    topt, opt = torch.optim.SparseAdam(tp, **kwargs), torchweb.optim.SparseAdam(p, **kwargs)
    for step in range(6):
        rows = torch.randint(0, 10, (5,), generator=g)
        vals = torch.randn(5, 4, generator=g)
        idx = torch.randint(0, 6, (1, 3), generator=g)
        vvals = torch.randn(3, generator=g) if step != 3 else torch.zeros(0)
        idx = idx if step != 3 else torch.zeros(1, 0, dtype=torch.long)
        tgrads = [torch.sparse_coo_tensor(rows[None], vals, (10, 4)), torch.sparse_coo_tensor(idx, vvals, (6,))]
        for t, o, gr in zip(tp, p, tgrads):
            t.grad = gr
            o.grad = torchweb.sparse_coo_tensor(ours(gr._indices(), device), ours(gr._values(), device), tuple(gr.shape))
        topt.step()
        opt.step()
    for a, b in zip(p, tp):
        torch.testing.assert_close(theirs(a.detach()), b.detach(), rtol=1e-5, atol=1e-6)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    for i, s in tsd["state"].items():
        assert list(sd["state"][i]) == list(s) and sd["state"][i]["step"] == s["step"] == 6
        for k in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(theirs(sd["state"][i][k]), s[k], rtol=1e-5, atol=1e-6)


def test_sparse_adam_refuses_dense_gradients_and_sparse_params():
    p, tp = torchweb.zeros(3, device="cpu", requires_grad=True), torch.zeros(3, requires_grad=True)
    p.grad, tp.grad = torchweb.ones(3, device="cpu"), torch.ones(3)
    with pytest.raises(RuntimeError) as exp:
        torch.optim.SparseAdam([tp]).step()
    with pytest.raises(RuntimeError) as got:
        torchweb.optim.SparseAdam([p]).step()
    assert str(got.value) == str(exp.value) == "SparseAdam does not support dense gradients, please consider Adam instead"
    sp = torchweb.sparse_coo_tensor(torchweb.tensor([[0]]), torchweb.ones(1), (3,))
    tsp = torch.sparse_coo_tensor(torch.tensor([[0]]), torch.ones(1), (3,))
    assert _bad(torchweb, "SparseAdam", [p, sp]) == _bad(torch, "SparseAdam", [tp, tsp])
    # and the dense optimizers refuse sparse gradients with PyTorch's message
    for name in ("Rprop", "ASGD", "Adafactor"):
        p.grad, tp.grad = sp, tsp
        with pytest.raises(RuntimeError) as exp:
            getattr(torch.optim, name)([tp]).step()
        with pytest.raises(RuntimeError) as got:
            getattr(torchweb.optim, name)([p]).step()
        assert str(got.value) == str(exp.value), name


@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), ()])
def test_adafactor_factors_the_last_two_dims(shape, device):
    """A 3-d parameter's second moments are row and column means over its last two dims (a
    batched row_var @ col_var); a vector's and a scalar's are full."""
    g = torch.Generator().manual_seed(2)
    w = torch.randn(shape, generator=g)
    tp, p = w.clone().requires_grad_(True), ours(w, device, requires_grad=True)
    topt, opt = torch.optim.Adafactor([tp], lr=0.05), torchweb.optim.Adafactor([p], lr=0.05)
    for _ in range(5):
        gr = torch.randn(shape, generator=g)
        tp.grad, p.grad = gr.clone(), ours(gr, device)
        topt.step()
        opt.step()
    torch.testing.assert_close(theirs(p.detach()), tp.detach(), rtol=1e-5, atol=1e-6)
    tstate, state = topt.state[tp], opt.state[p]
    assert list(state) == list(tstate)
    for k, v in tstate.items():
        assert tuple(state[k].shape) == tuple(v.shape)
        torch.testing.assert_close(theirs(state[k]), v, rtol=1e-5, atol=1e-7)


def test_swap_in_optimizer_params_and_state(device):
    """Inside the block the step acts on the given tensors and state (in-place edits reach the
    given state_dict), with its group options; the live optimizer is restored after."""
    runs = {}
    for lib in (torchweb, torch):
        _, params, opt = _train(lib, "Adam", dict(lr=0.01), device, steps=3)
        before = [theirs(p.detach()) if lib is torchweb else p.detach().clone() for p in params]
        live_state = opt.state
        sd = opt.state_dict()
        osd = _clone_state(sd) if lib is torchweb else copy.deepcopy(sd)
        osd["param_groups"][0]["lr"] = 0.5
        swapped = {f"p{i}": p.detach().clone().requires_grad_(True) for i, p in enumerate(params)}
        for p in swapped.values():
            p.grad = lib.ones_like(p)
        with lib.optim.swap_in_optimizer_params_and_state(opt, swapped, osd):
            assert opt.param_groups[0]["lr"] == 0.5
            opt.step()
        assert opt.state is live_state and opt.param_groups[0]["lr"] == 0.01
        assert opt.param_groups[0]["params"] == params
        for p, b in zip(params, before):   # (the live parameters untouched)
            torch.testing.assert_close(theirs(p.detach()) if lib is torchweb else p.detach(), b)
        runs[lib] = swapped, osd
    (ours_p, ours_sd), (their_p, their_sd) = runs[torchweb], runs[torch]
    for k in their_p:
        torch.testing.assert_close(theirs(ours_p[k].detach()), their_p[k].detach(), rtol=1e-5, atol=1e-6)
    for i, s in their_sd["state"].items():
        assert ours_sd["state"][i]["step"].item() == s["step"].item() == 4
        torch.testing.assert_close(theirs(ours_sd["state"][i]["exp_avg"]), s["exp_avg"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["no state", "groups", "extra key", "keys", "params"])
def test_swap_in_optimizer_params_and_state_errors(case):
    def attempt(lib):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        if case != "no state":
            p.grad = lib.ones(2)
            opt.step()
        sd = opt.state_dict()
        if case == "groups":
            sd["param_groups"] = sd["param_groups"] * 2
        elif case == "extra key":
            sd["state"][5] = {}
        elif case == "keys":
            sd["param_groups"][0]["other"] = 1
        elif case == "params":
            sd["param_groups"][0]["params"] = ["a"]
        try:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, sd):
                pass
        except Exception as e:  # noqa: BLE001  (comparing exception types and messages)
            return type(e), str(e)
    exp = attempt(torch)
    assert exp is not None and attempt(torchweb) == exp
