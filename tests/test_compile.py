"""torchweb.compile (issue 9): a call's GPU work captured once and replayed. Every replayed
result is compared with PyTorch running the same code eagerly (same initial weights, same
data), and the capture's statistics show that replays did happen where they should, and did not
where a replay would be wrong (readbacks, random numbers, Python values that change)."""

import functools
import os

import pytest
import torch

import torchweb as tw
from model_files import load_file

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def _pair(seed=0):
    """The same MLP in PyTorch and torchweb (webgpu)."""
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))
    ours = tw.nn.Sequential(tw.nn.Linear(20, 32), tw.nn.ReLU(), tw.nn.Linear(32, 5))
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in theirs.state_dict().items()})
    return ours.to("webgpu"), theirs


def _data(n, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(8, 20, generator=g), torch.randint(0, 5, (8,), generator=g)) for _ in range(n)]


def _ours(t, dtype=None):
    return tw.tensor(t.tolist(), dtype=dtype, device="webgpu")


def _train(lib, model, opt, data, compiled, sched=None):
    F = lib.nn.functional

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    f = lib.compile(step) if compiled else step
    losses = []
    for x, y in data:
        if lib is tw:
            x, y = _ours(x), _ours(y, tw.int64)
        losses.append(f(x, y))
        if sched is not None:
            sched.step()
    return [float(l.item()) for l in losses], f


# RAdam's update changes form at its 6th step (the rectification starts), ASGD's after t0 steps
# (its averaging starts): their replays cross it
OPTIONS = {"Adam": dict(lr=1e-2), "AdamW": dict(lr=1e-2, weight_decay=0.1),
           "SGD": dict(lr=0.1, momentum=0.9, nesterov=True), "RAdam": dict(lr=1e-2),
           "NAdam": dict(lr=1e-2, weight_decay=0.01), "RMSprop": dict(lr=1e-2, momentum=0.5, centered=True),
           "Adagrad": dict(lr=0.1, lr_decay=0.01), "Adadelta": dict(lr=1.0), "Adamax": dict(lr=1e-2),
           "Rprop": dict(lr=1e-2), "ASGD": dict(lr=0.05, t0=3, lambd=1e-2)}


@pytest.mark.parametrize("optim", list(OPTIONS))
def test_training_step_replays_and_matches_pytorch(optim):
    ours, theirs = _pair()
    kw = OPTIONS[optim]
    o_opt = getattr(tw.optim, optim)(ours.parameters(), **kw)
    t_opt = getattr(torch.optim, optim)(theirs.parameters(), **kw)
    data = _data(10)
    mine, f = _train(tw, ours, o_opt, data, True)
    ref, _ = _train(torch, theirs, t_opt, data, False)
    assert f.compile_stats["replays"] >= 6, f.compile_stats
    assert mine == pytest.approx(ref, abs=2e-5)
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert torch.allclose(torch.tensor(v.tolist()), w, atol=2e-5), k


class _MuonAndAdamW:
    """Muon for the 2-D weights, AdamW for the biases (PyTorch's Muon refuses other shapes),
    stepped together."""

    def __init__(self, lib, model, **options):
        self.opts = [lib.optim.Muon([p for p in model.parameters() if p.ndim == 2], lr=0.02, **options),
                     lib.optim.AdamW([p for p in model.parameters() if p.ndim != 2], lr=1e-2)]

    def zero_grad(self):
        for o in self.opts:
            o.zero_grad()

    def step(self):
        for o in self.opts:
            o.step()


def test_muon_step_replays_and_matches_pytorch():
    """Muon's Newton-Schulz ops are part of the captured program and its two fused kernels'
    scalars are recomputed per replay. Without the iteration (ns_steps=0) the curve is
    PyTorch's; with it, the compiled steps are the eager ones (the iteration's bfloat16
    emulation differs from PyTorch's by a few bfloat16 units: tests/test_optim_muon.py)."""
    ours, theirs = _pair()
    data = _data(10)
    mine, f = _train(tw, ours, _MuonAndAdamW(tw, ours, ns_steps=0), data, True)
    ref, _ = _train(torch, theirs, _MuonAndAdamW(torch, theirs, ns_steps=0), data, False)
    assert f.compile_stats["replays"] >= 6, f.compile_stats
    assert mine == pytest.approx(ref, abs=2e-5)
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert torch.allclose(torch.tensor(v.tolist()), w, atol=2e-5), k
    compiled, eager = _pair()[0], _pair()[0]
    mine, f = _train(tw, compiled, _MuonAndAdamW(tw, compiled), data, True)
    again, _ = _train(tw, eager, _MuonAndAdamW(tw, eager), data, False)
    assert f.compile_stats["replays"] >= 6, f.compile_stats
    assert mine == pytest.approx(again, abs=1e-6)
    for (k, v), (_, w) in zip(compiled.state_dict().items(), eager.state_dict().items()):
        assert torch.allclose(torch.tensor(v.tolist()), torch.tensor(w.tolist()), atol=1e-6), k


def test_a_changed_muon_option_is_not_replayed_silently():
    """The iteration's options are constants of the captured program: a replay whose options
    changed raises (the update's form check) rather than run the old ones."""
    ours, _ = _pair()
    opt = _MuonAndAdamW(tw, ours)
    data = _data(5)
    _, f = _train(tw, ours, opt, data[:4], True)
    assert f.compile_stats["replays"] >= 1, f.compile_stats
    opt.opts[0].param_groups[0]["ns_steps"] = 3
    with pytest.raises(RuntimeError, match="no longer has the form it had when the step was captured"):
        f(_ours(data[4][0]), _ours(data[4][1], tw.int64))


@pytest.mark.parametrize("optim", ["Adam", "SGD"])
def test_scheduler_outside_the_step_is_followed(optim):
    ours, theirs = _pair()
    o_opt, t_opt = getattr(tw.optim, optim)(ours.parameters(), lr=0.05), getattr(torch.optim, optim)(theirs.parameters(), lr=0.05)
    o_s = tw.optim.lr_scheduler.StepLR(o_opt, step_size=3, gamma=0.1)
    t_s = torch.optim.lr_scheduler.StepLR(t_opt, step_size=3, gamma=0.1)
    data = _data(10)
    mine, f = _train(tw, ours, o_opt, data, True, o_s)
    ref, _ = _train(torch, theirs, t_opt, data, False, t_s)
    assert f.compile_stats["replays"] >= 6
    assert mine == pytest.approx(ref, abs=2e-5)
    if optim == "Adam":
        assert o_opt.state[ours[0].weight]["step"].item() == 10


@pytest.mark.parametrize("optim", ["SparseAdam", "Adafactor", "LBFGS"])
def test_an_optimizer_that_runs_op_by_op_is_not_captured(optim):
    """Adafactor reads norms back, SparseAdam gathers at a gradient's indices, LBFGS needs a
    closure: their steps run eagerly, and the same as PyTorch's."""
    ours, theirs = _pair()
    kw = dict(lr=0.05) if optim != "LBFGS" else dict(lr=0.5, max_iter=3)
    o_opt = getattr(tw.optim, optim)(ours.parameters(), **kw)
    t_opt = getattr(torch.optim, optim)(theirs.parameters(), **kw)

    def step(lib, model, opt, x, y):
        def closure():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            if optim == "SparseAdam":
                for p in model.parameters():
                    p.grad = p.grad.to_sparse(1) if p.dim() == 2 else p.grad.to_sparse()
            return loss
        if optim == "LBFGS":
            return opt.step(closure)
        loss = closure()
        opt.step()
        return loss
    f = tw.compile(step)
    for x, y in _data(4):
        mine = f(tw, ours, o_opt, _ours(x), _ours(y, tw.int64))
        ref = step(torch, theirs, t_opt, x, y)
        assert mine.item() == pytest.approx(ref.item(), abs=2e-5)
    assert f.compile_stats["replays"] == 0
    why = {"SparseAdam": "reads values back", "Adafactor": "Adafactor's update runs op by op", "LBFGS": "closure"}
    assert any(why[optim] in r for r in f.compile_stats["reasons"]), f.compile_stats["reasons"]
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert torch.allclose(torch.tensor(v.tolist()), w, atol=2e-5), k


def test_held_outputs_keep_their_values():
    ours, _ = _pair()
    f = tw.compile(lambda x: (x @ x.t()).relu() * 2)
    xs = [tw.randn(6, 6, device="webgpu") for _ in range(6)]
    outs = [f(x) for x in xs]      # the later calls replay; earlier outputs must not change
    for x, y in zip(xs, outs):
        assert y.tolist() == ((x @ x.t()).relu() * 2).tolist()
    assert f.compile_stats["replays"] == 3


def test_inference_module_replays_with_new_inputs():
    ours, theirs = _pair()
    cm = tw.compile(ours)
    assert list(cm.state_dict()) == list(torch.compile(theirs).state_dict())   # '_orig_mod.' keys
    with tw.no_grad():
        for x, _ in _data(5):
            y = cm(_ours(x))
            assert torch.allclose(torch.tensor(y.tolist()), theirs(x), atol=1e-5)
    assert cm.compile_stats["replays"] == 2
    cm.eval()
    assert not ours.training


def test_a_readback_inside_runs_eagerly():
    ours, theirs = _pair()
    o_opt, t_opt = tw.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)
    seen = []

    def step(lib, model, opt, x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        seen.append(loss.item())     # Python needs the value now: no replay possible
        loss.backward()
        opt.step()
    f = tw.compile(step)
    for x, y in _data(5):
        f(tw, ours, o_opt, _ours(x), _ours(y, tw.int64))
        step(torch, theirs, t_opt, x, y)
    assert seen[0::2] == pytest.approx(seen[1::2], abs=1e-5)
    assert f.compile_stats["replays"] == 0 and "reads values back" in f.compile_stats["reasons"][0]


def _dropout_step(lib, model, opt, x, y):
    opt.zero_grad()
    h = lib.nn.functional.dropout(model[1](model[0](x)), 0.3, training=True)   # (a random draw in the step)
    loss = lib.nn.functional.cross_entropy(model[2](h), y) + lib.rand(()).to(x.device) * 0
    loss.backward()
    opt.step()
    return loss


def test_random_numbers_replay_as_eager_draws_them():
    """Dropout and torch.rand in a captured step: each replay draws new numbers, from the
    generator as an eager call would, so a seeded compiled run gives the seeded eager run's
    losses and weights exactly, and a new mask every call."""
    runs = []
    for compiled in (False, True):
        tw.manual_seed(7)
        ours, _ = _pair()
        opt = tw.optim.Adam(ours.parameters(), lr=1e-2)
        step = functools.partial(_dropout_step, tw, ours, opt)
        f = tw.compile(step) if compiled else step
        losses = [float(f(_ours(x), _ours(y, tw.int64)).item()) for x, y in _data(8)]
        runs.append((losses, [v.tolist() for v in ours.state_dict().values()], f))
    (eager, eager_w, _), (mine, mine_w, f) = runs
    assert f.compile_stats["replays"] >= 4, f.compile_stats
    assert mine == eager and mine_w == eager_w
    assert len(set(mine)) == len(mine)


def test_a_dropout_mask_is_new_every_replay():
    f = tw.compile(lambda x: tw.nn.functional.dropout(x, 0.5, training=True))
    x = tw.ones(1000, device="webgpu")
    tw.manual_seed(3)
    masks = [f(x).tolist() for _ in range(6)]
    tw.manual_seed(3)
    eager = [tw.nn.functional.dropout(x, 0.5, training=True).tolist() for _ in range(6)]
    assert f.compile_stats["replays"] >= 3 and masks == eager
    assert len({tuple(m) for m in masks}) == 6


def test_random_numbers_drawn_on_the_host_run_eagerly():
    f = tw.compile(lambda x: x[tw.randperm(x.shape[0], device="webgpu")] * 2)
    x = tw.arange(1000, dtype=tw.float32, device="webgpu")
    outs = [f(x).tolist() for _ in range(5)]
    assert len({tuple(o) for o in outs}) == 5
    assert f.compile_stats["replays"] == 0 and "random" in f.compile_stats["reasons"][0]


SCALE = 2.0


def test_a_changed_global_scalar_is_seen():
    global SCALE

    def g(x):
        return x * SCALE
    f = tw.compile(g)
    x = tw.arange(4.0, device="webgpu")
    for scale in (2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0):
        SCALE = scale
        assert f(x).tolist() == [0.0, scale, 2 * scale, 3 * scale]
    assert f.compile_stats["replays"] >= 2


def test_a_python_value_changing_every_call_is_never_replayed():
    box = {"k": 0.0}

    def g(x):
        box["k"] += 1.0
        return x + box["k"]          # a value the guards cannot see: the recordings differ
    f = tw.compile(g)
    x = tw.zeros(3, device="webgpu")
    for i in range(1, 8):
        assert f(x).tolist() == [float(i)] * 3
    assert f.compile_stats["replays"] == 0


def test_a_replaced_parameter_is_seen():
    ours, theirs = _pair()
    f = tw.compile(lambda x: ours(x))
    x, _ = _data(1)[0]
    with tw.no_grad():
        for _ in range(4):
            f(_ours(x))
        new = torch.nn.Linear(20, 32)
        ours[0].weight = tw.nn.Parameter(_ours(new.weight.detach()))
        theirs[0].weight = new.weight
        y = f(_ours(x))
    assert torch.allclose(torch.tensor(y.tolist()), theirs(x), atol=1e-5)


def test_bad_target_in_a_replay_raises_at_the_next_readback():
    ours, _ = _pair()
    opt = tw.optim.SGD(ours.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = tw.nn.functional.cross_entropy(ours(x), y)
        loss.backward()
        opt.step()
        return loss
    f = tw.compile(step)
    data = _data(4)
    for x, y in data:
        f(_ours(x), _ours(y, tw.int64)).item()
    assert f.compile_stats["replays"] >= 1
    bad = y.clone()
    bad[2] = 7
    loss = f(_ours(x), _ours(bad, tw.int64))
    with pytest.raises(IndexError, match="out of bounds"):
        loss.item()
    assert f(_ours(x), _ours(y, tw.int64)).item() > 0       # the device is usable after


def test_nanogpt_training_step_matches_pytorch():
    ours_mod, theirs_mod = load_file(os.path.join(MODELS, "nanogpt_model.py"), tw), \
        load_file(os.path.join(MODELS, "nanogpt_model.py"), torch)
    kw = dict(block_size=16, vocab_size=61, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True)
    tw.manual_seed(0)
    g_ours, g_theirs = ours_mod.GPT(ours_mod.GPTConfig(**kw)), theirs_mod.GPT(theirs_mod.GPTConfig(**kw))
    g_theirs.load_state_dict({k: torch.tensor(v.tolist()) for k, v in g_ours.state_dict().items()})
    g_ours.to("webgpu")
    o_opt = g_ours.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    t_opt = g_theirs.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")

    def step(model, opt, idx, tgt):
        _, loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    f = tw.compile(step)
    g = torch.Generator().manual_seed(3)
    mine, ref = [], []
    for _ in range(7):
        idx, tgt = torch.randint(0, 61, (3, 16), generator=g), torch.randint(0, 61, (3, 16), generator=g)
        mine.append(f(g_ours, o_opt, _ours(idx, tw.int64), _ours(tgt, tw.int64)))
        ref.append(step(g_theirs, t_opt, idx, tgt).item())
    assert f.compile_stats["replays"] >= 4, f.compile_stats
    assert [l.item() for l in mine] == pytest.approx(ref, abs=1e-4)


def test_a_replay_whose_update_changed_form_is_refused_with_a_clear_error():
    """The kernels a replay patches must be the ones captured: an update whose form differs from
    the captured one (a structure the scalars cannot describe) raises instead of patching the
    wrong kernel."""
    ours, _ = _pair()
    opt = tw.optim.Adam(ours.parameters(), lr=1e-2)
    x, y = _data(1)[0]
    tw.nn.functional.cross_entropy(ours(_ours(x)), _ours(y, tw.int64)).backward()
    opt.step()
    with pytest.raises(RuntimeError, match="no longer has the form it had when the step was captured"):
        with tw.lazy.collecting_scalars():
            opt._run_step(None, replaying=[("another form",)])


@pytest.mark.parametrize("optim", ["Adam", "NAdam", "ASGD"])
def test_without_numpy_a_replay_is_one_execute_and_matches_pytorch(optim, monkeypatch):
    """Pyodide has no numpy: the step counters (and NAdam's mu_product, ASGD's eta and mu) are
    0-d webgpu tensors, written in place by a replay, their WRITEs carried by the program's one
    execute (the browser driver's path: no prepared programs). Losses and state equal PyTorch's."""
    from torchweb.optim import optimizer as O
    from torchweb.backends.webgpu.runtime import get_runtime
    monkeypatch.setattr(O, "_HAS_NUMPY", [False])
    rt = get_runtime()
    monkeypatch.setattr(rt.driver, "prepare", None, raising=False)
    executes = []
    execute = rt.driver.execute
    monkeypatch.setattr(rt.driver, "execute", lambda *a: (executes.append(1), execute(*a))[1])
    ours, theirs = _pair()
    kw = OPTIONS[optim]
    o_opt = getattr(tw.optim, optim)(ours.parameters(), **kw)
    t_opt = getattr(torch.optim, optim)(theirs.parameters(), **kw)
    data = _data(8)
    x, y = _ours(data[-1][0]), _ours(data[-1][1], tw.int64)
    mine, f = _train(tw, ours, o_opt, data[:-1], True)
    rt.flush()
    executes.clear()
    replays = f.compile_stats["replays"]
    mine.append(float(f(x, y).item()))   # (the item's readback flushes nothing more)
    ref, _ = _train(torch, theirs, t_opt, data, False)
    assert f.compile_stats["replays"] == replays + 1 >= 2, f.compile_stats
    assert len(executes) == 1
    assert mine == pytest.approx(ref, abs=2e-5)
    for s, ts in zip(o_opt.state.values(), t_opt.state.values()):
        for k, v in ts.items():
            if v.dim() == 0:
                assert s[k].device.type == "webgpu" and s[k].item() == pytest.approx(float(v), rel=1e-6), k



def test_a_scalar_past_float32s_range_replays_as_eager():
    """A replay packs its recomputed f32 scalars at once; one past float32's range (Adam's
    step size lr / (1 - beta1) with lr = 3e38) becomes inf there as in the eager kernel's
    uniform (PyTorch refuses such a step: the compiled run is compared with the eager one)."""
    runs = []
    for compiled in (True, False):
        ours, _ = _pair()
        opt = tw.optim.Adam(ours.parameters(), lr=3e38)
        _, f = _train(tw, ours, opt, _data(4), compiled)
        runs.append([torch.tensor(v.tolist()) for v in ours.state_dict().values()])
        if compiled:
            assert f.compile_stats["replays"] >= 1, f.compile_stats
    assert any(torch.isinf(v).any() for v in runs[1])
    for a, b in zip(*runs):
        assert torch.equal(a.nan_to_num(), b.nan_to_num())
