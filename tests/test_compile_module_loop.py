"""torch.compile(model) in an ordinary training loop (issue 21, item 4): the module's forward is
captured, its backward is recorded the first times `.backward()` runs through it, and later
steps replay both. Each run is compared with the same loop run eagerly by torchweb (the same
kernels: losses and weights equal exactly) and by PyTorch (within float tolerance), and
compile_stats must show the forward and backward replays, or the reason a call ran eagerly."""

import os

import pytest
import torch

import torchweb as tw
from model_files import load_file

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
GPT_CONFIG = dict(block_size=16, vocab_size=61, n_layer=2, n_head=2, n_embd=16, bias=True)


def _ours(t, dtype=None):
    return tw.tensor(t.tolist(), dtype=dtype, device="webgpu")


def _theirs_mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))


def _ours_like(theirs):
    ours = tw.nn.Sequential(tw.nn.Linear(20, 32), tw.nn.ReLU(), tw.nn.Linear(32, 5))
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in theirs.state_dict().items()})
    return ours.to("webgpu")


def _data(n, batch=8, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, 20, generator=g), torch.randint(0, 5, (batch,), generator=g))
            for _ in range(n)]


def _weights(model):
    return [v.tolist() for v in model.state_dict().values()]


def _loop(lib, model, opt, data, compile_it=False):
    """The loop as tutorials write it: the model compiled, backward and step outside."""
    F = lib.nn.functional
    net = lib.compile(model) if compile_it else model
    losses = []
    for x, y in data:
        if lib is tw:
            x, y = _ours(x), _ours(y, tw.int64)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, net


def test_mlp_forward_and_backward_replay_with_eager_losses():
    theirs = _theirs_mlp()
    data = _data(10)
    runs = []
    for compiled in (False, True):
        ours = _ours_like(theirs)
        losses, net = _loop(tw, ours, tw.optim.Adam(ours.parameters(), lr=1e-2), data, compiled)
        runs.append((losses, _weights(ours), net))
    ref, _ = _loop(torch, theirs, torch.optim.Adam(theirs.parameters(), lr=1e-2), data)
    (eager, eager_w, _), (mine, mine_w, net) = runs
    stats = net.compile_stats
    assert stats["replays"] >= 7 and stats["backward_replays"] >= 7, stats
    assert stats["captures"] == stats["backward_captures"] == 1 and not stats["reasons"], stats
    assert mine == eager and mine_w == eager_w
    assert mine == pytest.approx(ref, abs=2e-5)


def _gpt_pair(dropout=0.0):
    ours_mod = load_file(os.path.join(MODELS, "nanogpt_model.py"), tw)
    theirs_mod = load_file(os.path.join(MODELS, "nanogpt_model.py"), torch)
    tw.manual_seed(0)
    ours = ours_mod.GPT(ours_mod.GPTConfig(dropout=dropout, **GPT_CONFIG))
    theirs = theirs_mod.GPT(theirs_mod.GPTConfig(dropout=dropout, **GPT_CONFIG))
    theirs.load_state_dict({k: torch.tensor(v.tolist()) for k, v in ours.state_dict().items()})
    return ours.to("webgpu"), theirs


def _tokens(n, batch=3, seed=3, distinct=False):
    """n (input, target) batches of token ids. distinct: no id twice in an input batch, so that
    the embedding's backward adds each row once (with repeats its float atomics add in whatever
    order the GPU runs them, and two eager runs may differ in the last bits)."""
    g = torch.Generator().manual_seed(seed)

    def ids():
        if distinct:
            return torch.randperm(61, generator=g)[:batch * 16].reshape(batch, 16)
        return torch.randint(0, 61, (batch, 16), generator=g)
    return [(ids(), torch.randint(0, 61, (batch, 16), generator=g)) for _ in range(n)]


def _gpt_loop(lib, model, data, compile_it=False, grad_accum=1, evaluate=None):
    """nanoGPT's train.py: the model compiled, gradient accumulation over micro-steps with the
    loss scaled down and the next batch fetched between forward and backward, autocast and a
    GradScaler (disabled: float32), clip_grad_norm_, AdamW, zero_grad(set_to_none=True), and
    estimate_loss's eval pass under no_grad between steps."""
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    net = lib.compile(model) if compile_it else model
    scaler = lib.amp.GradScaler(enabled=False)
    ctx = lib.amp.autocast(device_type="cpu", dtype=lib.float32, enabled=False)
    convert = (lambda t: _ours(t, tw.int64)) if lib is tw else (lambda t: t)
    batches = iter(data)

    def get_batch():
        return tuple(map(convert, next(batches, data[0])))
    losses, evals = [], []
    X, Y = get_batch()
    for _ in range(len(data) // grad_accum):
        for _ in range(grad_accum):
            with ctx:
                _, loss = net(X, Y)
                loss = loss / grad_accum
            X, Y = get_batch()
            scaler.scale(loss).backward()
            losses.append(loss.item() * grad_accum)
        scaler.unscale_(opt)
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        if evaluate is not None:
            net.eval()
            with lib.no_grad(), ctx:
                _, val_loss = net(*map(convert, evaluate))
                logits, _ = net(convert(evaluate[0]))
            evals.append([val_loss.item()] + logits.reshape(-1).tolist())
            net.train()
    return losses, evals, net


@pytest.mark.parametrize("grad_accum", [1, 2])
def test_nanogpt_train_py_pattern_replays_with_pytorchs_losses(grad_accum):
    ours, theirs = _gpt_pair()
    data = _tokens(10 * grad_accum)
    probe = _tokens(1, seed=9)[0]
    mine, mine_evals, net = _gpt_loop(tw, ours, data, True, grad_accum, probe)
    ref, ref_evals, _ = _gpt_loop(torch, theirs, data, False, grad_accum, probe)
    stats = net.compile_stats
    assert stats["replays"] >= 7 * grad_accum + 7 and stats["backward_replays"] >= 7 * grad_accum, stats
    assert stats["captures"] == 3 and not stats["reasons"], stats     # the train pair, two evals
    assert mine == pytest.approx(ref, abs=1e-4)
    for a, b in zip(mine_evals, ref_evals):
        assert a == pytest.approx(b, abs=1e-4)
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert torch.allclose(torch.tensor(v.tolist()), w, atol=1e-4), k


def test_nanogpt_with_dropout_replays_the_eager_draws():
    """Dropout inside the captured forward: each replay draws from the generator as the eager
    call would, so a seeded compiled run gives the seeded eager run's losses and weights."""
    runs = []
    for compiled in (False, True):
        ours, _ = _gpt_pair(dropout=0.1)
        tw.manual_seed(5)
        losses, _, net = _gpt_loop(tw, ours, _tokens(10, distinct=True), compiled)
        runs.append((losses, _weights(ours), net))
    (eager, eager_w, _), (mine, mine_w, net) = runs
    assert net.compile_stats["replays"] >= 5 and net.compile_stats["backward_replays"] >= 5
    assert mine == eager and mine_w == eager_w


def test_inputs_that_require_grad_get_their_gradients():
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    net = tw.compile(ours)
    for x, y in _data(6):
        a = _ours(x).requires_grad_()        # a leaf input
        b = _ours(x).requires_grad_()
        out = net(b * 2)                     # an input with a graph of its own
        # (two calls before one backward: each has a pair of programs of its own; a third call
        # before that backward runs eagerly)
        extra = net(_ours(x).requires_grad_()).sum()
        loss = tw.nn.functional.cross_entropy(net(a), _ours(y, tw.int64)) + out.square().mean() + 0 * extra
        ours.zero_grad()
        loss.backward()
        ta, tb = x.clone().requires_grad_(), x.clone().requires_grad_()
        theirs.zero_grad()
        (torch.nn.functional.cross_entropy(theirs(ta), y) + theirs(tb * 2).square().mean()).backward()
        assert torch.allclose(torch.tensor(a.grad.tolist()), ta.grad, atol=1e-6)
        assert torch.allclose(torch.tensor(b.grad.tolist()), tb.grad, atol=1e-6)
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert torch.allclose(torch.tensor(p.grad.tolist()), q.grad, atol=1e-6)
    stats = net.compile_stats
    assert stats["captures"] == 2 and stats["replays"] >= 6 and stats["backward_replays"] >= 6, stats
    assert any("backward has not run yet" in r for r in stats["reasons"])


def test_gradients_accumulate_into_grad_as_eager():
    """The first backward sets .grad, the next ones add into that same tensor."""
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    net = tw.compile(ours)
    data = _data(12)
    for step in range(6):
        ours.zero_grad(set_to_none=True)
        theirs.zero_grad(set_to_none=True)
        held = None
        for x, y in data[2 * step:2 * step + 2]:
            (tw.nn.functional.cross_entropy(net(_ours(x)), _ours(y, tw.int64)) / 2).backward()
            (torch.nn.functional.cross_entropy(theirs(x), y) / 2).backward()
            held = ours[0].weight.grad if held is None else held
        assert ours[0].weight.grad is held
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert torch.allclose(torch.tensor(p.grad.tolist()), q.grad, atol=1e-6)
    assert net.compile_stats["backward_replays"] >= 8, net.compile_stats


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_a_smaller_last_batch_gets_a_second_capture(dynamic):
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    o_opt, t_opt = tw.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)
    net = tw.compile(ours, dynamic=dynamic)
    epoch = _data(3) + _data(1, batch=3, seed=2)
    mine, ref = [], []
    for _ in range(5):
        mine += _loop(tw, net, o_opt, epoch)[0]
        ref += _loop(torch, theirs, t_opt, epoch)[0]
    stats = net.compile_stats
    assert stats["captures"] == 2 and stats["replays"] >= 9 + 2, stats    # both shapes replay
    assert mine == pytest.approx(ref, abs=2e-5)


def test_past_the_cache_limit_calls_run_eagerly_with_the_reason():
    tw._dynamo.config.cache_size_limit = 2
    try:
        theirs = _theirs_mlp()
        ours = _ours_like(theirs)
        net = tw.compile(ours)
        with tw.no_grad():
            for batch in (1, 2, 3) * 4:
                x = torch.randn(batch, 20)
                assert torch.allclose(torch.tensor(net(_ours(x)).tolist()), theirs(x), atol=1e-5)
    finally:
        tw._dynamo.config.cache_size_limit = 8
    stats = net.compile_stats
    # batches 1 and 2: a warm-up, two recordings, a replay; batch 3 always eager
    assert stats["replays"] == 2 and stats["eager"] == 6, stats
    assert any("more than 2 input signatures" in r for r in net.compile_stats["reasons"])


def test_eval_forward_is_its_own_capture():
    """Switching train/eval does not throw the train capture away: each has its own."""
    theirs = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.Dropout(0.5), torch.nn.Linear(32, 5))
    ours = tw.nn.Sequential(tw.nn.Linear(20, 32), tw.nn.Dropout(0.5), tw.nn.Linear(32, 5))
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in theirs.state_dict().items()})
    ours.to("webgpu")
    net = tw.compile(ours)
    opt = tw.optim.SGD(ours.parameters(), lr=0.1)
    probe = torch.randn(4, 20)
    for x, y in _data(8):
        net.train()
        loss = tw.nn.functional.cross_entropy(net(_ours(x)), _ours(y, tw.int64))
        opt.zero_grad()
        loss.backward()
        opt.step()
        net.eval()
        with tw.no_grad():
            out = net(_ours(probe))
        theirs.load_state_dict({k: torch.tensor(v.tolist()) for k, v in ours.state_dict().items()})
        assert torch.allclose(torch.tensor(out.tolist()), theirs.eval()(probe), atol=1e-5)
    stats = net.compile_stats
    assert stats["captures"] == 2 and stats["replays"] >= 10 and stats["backward_replays"] >= 5, stats


def test_parameters_changed_in_place_are_read_and_replaced_ones_recaptured():
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    net = tw.compile(ours)
    data = _data(13)

    def check(x, y):
        out = net(_ours(x))
        tw.nn.functional.cross_entropy(out, _ours(y, tw.int64)).backward()
        theirs.zero_grad()
        torch.nn.functional.cross_entropy(theirs(x), y).backward()
        assert torch.allclose(torch.tensor(out.tolist()), theirs(x), atol=1e-5)
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert torch.allclose(torch.tensor(p.grad.tolist()), q.grad, atol=1e-5)
        ours.zero_grad()
    for x, y in data[:4]:
        check(x, y)
    assert net.compile_stats["replays"] == 1
    new = _theirs_mlp(seed=4)
    theirs.load_state_dict(new.state_dict())
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in new.state_dict().items()})  # in place
    check(*data[4])
    assert net.compile_stats["replays"] == 2
    w = torch.randn(32, 20)
    theirs[0].weight = torch.nn.Parameter(w)
    ours[0].weight = tw.nn.Parameter(_ours(w))                                              # replaced
    for x, y in data[5:9]:
        check(x, y)
    assert net.compile_stats["captures"] == 2
    new = _theirs_mlp(seed=5)
    theirs.load_state_dict(new.state_dict(), assign=True)
    ours.load_state_dict({k: _ours(v) for k, v in new.state_dict().items()}, assign=True)  # replaced
    for x, y in data[9:]:
        check(x, y)
    stats = net.compile_stats
    assert stats["captures"] == 3 and stats["replays"] >= 4, stats


def test_retain_graph_and_create_graph_fall_back_with_reasons():
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    net = tw.compile(ours)
    data = _data(8)
    for x, y in data[:4]:
        loss = tw.nn.functional.cross_entropy(net(_ours(x)), _ours(y, tw.int64))
        ours.zero_grad()
        loss.backward(retain_graph=True)
        # the graph is kept, and so is another call's: a third call runs eagerly (the captured
        # buffers of both pairs hold those calls' values)
        kept = net(_ours(x))
        assert torch.allclose(torch.tensor(net(_ours(x)).tolist()), theirs(x), atol=1e-5)
        del kept
        loss.backward()                      # twice through the same call
        theirs.zero_grad()
        t_loss = torch.nn.functional.cross_entropy(theirs(x), y)
        t_loss.backward(retain_graph=True)
        t_loss.backward()
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert torch.allclose(torch.tensor(p.grad.tolist()), q.grad, atol=1e-6)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()
    assert net.compile_stats["backward_replays"] >= 1
    assert any("retain_graph=True" in r for r in net.compile_stats["reasons"])
    # create_graph through a replayed call: refused (its gradients would have no graph), and
    # the signature runs eagerly from then on, where it works
    x, y = data[4]
    out = net(_ours(x))
    with pytest.raises(RuntimeError, match="create_graph=True through a replayed call"):
        tw.autograd.grad(out.square().sum(), list(ours.parameters()), create_graph=True)
    assert any("create_graph" in r for r in net.compile_stats["reasons"])
    x_o = _ours(x).requires_grad_()
    (g,) = tw.autograd.grad(net(x_o).square().sum(), [x_o], create_graph=True)
    g.sum().backward()
    x_t = x.clone().requires_grad_()
    (h,) = torch.autograd.grad(theirs(x_t).square().sum(), [x_t], create_graph=True)
    h.sum().backward()
    assert torch.allclose(torch.tensor(x_o.grad.tolist()), x_t.grad, atol=1e-5)


def test_a_readback_inside_the_forward_runs_eagerly_with_its_graph():
    class Peek(tw.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            out = self.inner(x)
            if out.abs().max().item() > 1e6:       # Python depends on the values
                out = out / 2
            return out
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    net = tw.compile(Peek(ours))
    for x, y in _data(5):
        ours.zero_grad()
        tw.nn.functional.cross_entropy(net(_ours(x)), _ours(y, tw.int64)).backward()
        theirs.zero_grad()
        torch.nn.functional.cross_entropy(theirs(x), y).backward()
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert torch.allclose(torch.tensor(p.grad.tolist()), q.grad, atol=1e-6)
    assert net.compile_stats["replays"] == 0
    assert any("reads values back" in r for r in net.compile_stats["reasons"])


def test_the_optimizer_step_compiled_on_its_own():
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    o_opt, t_opt = tw.optim.AdamW(ours.parameters(), lr=1e-2), torch.optim.AdamW(theirs.parameters(), lr=1e-2)
    net, step = tw.compile(ours), tw.compile(o_opt.step)
    mine, ref = [], []
    for x, y in _data(10):
        loss = tw.nn.functional.cross_entropy(net(_ours(x)), _ours(y, tw.int64))
        loss.backward()
        step()
        o_opt.zero_grad(set_to_none=True)
        mine.append(loss.item())
        t_loss = torch.nn.functional.cross_entropy(theirs(x), y)
        t_loss.backward()
        t_opt.step()
        t_opt.zero_grad(set_to_none=True)
        ref.append(t_loss.item())
    assert mine == pytest.approx(ref, abs=2e-5)
    assert net.compile_stats["backward_replays"] >= 7
    assert step.compile_stats["replays"] >= 7, step.compile_stats


def test_a_step_that_clears_the_gradients_at_its_end_runs_eagerly_with_the_reason():
    """zero_grad(set_to_none=True) after opt.step() inside a compiled step: a replay's optimizer
    would find no gradients, so the step is not replayed (the model compiled instead is)."""
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    o_opt, t_opt = tw.optim.Adam(ours.parameters(), lr=1e-2), torch.optim.Adam(theirs.parameters(), lr=1e-2)

    def step(lib, model, opt, x, y):
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    f = tw.compile(step)
    for x, y in _data(5):
        mine = f(tw, ours, o_opt, _ours(x), _ours(y, tw.int64)).item()
        assert mine == pytest.approx(step(torch, theirs, t_opt, x, y).item(), abs=2e-5)
    assert f.compile_stats["replays"] == 0
    assert any("sets the gradients to None after the optimizer step" in r for r in f.compile_stats["reasons"])


def test_batch_norm_buffers_and_a_compiled_function_of_a_module():
    """BatchNorm's running statistics are updated in place by every replayed forward, and a
    compiled function (not a module) whose outputs require grad replays the same way."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
                                 torch.nn.Linear(16, 5))
    ours = tw.nn.Sequential(tw.nn.Linear(20, 16), tw.nn.BatchNorm1d(16), tw.nn.ReLU(), tw.nn.Linear(16, 5))
    ours.load_state_dict({k: tw.tensor(v.tolist()) for k, v in theirs.state_dict().items()})
    ours.to("webgpu")
    f = tw.compile(lambda x: ours(x).tanh())     # (an output its own backward reads)
    o_opt, t_opt = tw.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)
    for x, y in _data(8):
        loss = tw.nn.functional.cross_entropy(f(_ours(x)), _ours(y, tw.int64))
        o_opt.zero_grad()
        loss.backward()
        o_opt.step()
        t_loss = torch.nn.functional.cross_entropy(theirs(x).tanh(), y)
        t_opt.zero_grad()
        t_loss.backward()
        t_opt.step()
        assert loss.item() == pytest.approx(t_loss.item(), abs=2e-5)
    assert f.compile_stats["replays"] >= 5 and f.compile_stats["backward_replays"] >= 5, f.compile_stats
    for (k, v), (_, w) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert torch.allclose(torch.tensor(v.tolist(), dtype=w.dtype), w, atol=1e-5), k


def test_a_backward_from_fewer_outputs_than_captured_gets_zeros_for_the_others():
    """The captured backward took gradients from both outputs; a later one from one output
    replays it with zeros for the other. One from an output it never took a gradient from
    cannot replay: it raises, and the next calls run eagerly."""
    class Two(tw.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            h = self.inner(x)
            return h, h.tanh()
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    net = tw.compile(Two(ours))

    def grads_match(pick):
        for x, _ in _data(1, seed=7):
            a, b = net(_ours(x))
            ours.zero_grad()
            sum(t.square().sum() for t in pick(a, b)).backward()
            ta = theirs(x)
            theirs.zero_grad()
            sum(t.square().sum() for t in pick(ta, ta.tanh())).backward()
            for p, q in zip(ours.parameters(), theirs.parameters()):
                assert torch.allclose(torch.tensor(p.grad.tolist()), q.grad, atol=1e-5)
    for _ in range(4):
        grads_match(lambda a, b: (a, b))
    replays = net.compile_stats["backward_replays"]
    grads_match(lambda a, b: (b,))
    assert net.compile_stats["backward_replays"] == replays + 1

    net = tw.compile(Two(ours))
    for _ in range(4):
        grads_match(lambda a, b: (b,))
    with pytest.raises(RuntimeError, match="took no gradient from"):
        grads_match(lambda a, b: (a, b))
    grads_match(lambda a, b: (a, b))
    assert any("other outputs" in r for r in net.compile_stats["reasons"])


def test_a_function_that_reads_gradients_sees_new_ones():
    """A compiled inference function reading .grad (a gradient norm for logging): after
    zero_grad(set_to_none=True) and a new backward the gradients are new tensors, which a replay
    must read, not the captured ones."""
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    norm = tw.compile(lambda: sum((p.grad * p.grad).sum() for p in ours.parameters()))
    for x, y in _data(6):
        ours.zero_grad(set_to_none=True)
        tw.nn.functional.cross_entropy(ours(_ours(x)), _ours(y, tw.int64)).backward()
        theirs.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(theirs(x), y).backward()
        with tw.no_grad():
            mine = norm().item()
        assert mine == pytest.approx(sum((p.grad ** 2).sum() for p in theirs.parameters()).item(), rel=1e-5)


def test_grad_scaler_enabled_around_a_compiled_module():
    """A GradScaler that scales the loss and unscales the gradients (reading them back, outside
    the compiled module) around replayed forwards and backwards: PyTorch's losses."""
    theirs = _theirs_mlp()
    ours = _ours_like(theirs)
    runs = []
    for lib, model in ((tw, ours), (torch, theirs)):
        net = lib.compile(model) if lib is tw else model
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = lib.amp.GradScaler("cpu" if lib is torch else "webgpu", init_scale=2.0 ** 10)
        losses = []
        for x, y in _data(8):
            if lib is tw:
                x, y = _ours(x), _ours(y, tw.int64)
            loss = lib.nn.functional.cross_entropy(net(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.item())
        runs.append((losses, net))
    (mine, net), (ref, _) = runs
    assert net.compile_stats["backward_replays"] >= 5, net.compile_stats
    assert mine == pytest.approx(ref, abs=2e-5)
