"""nn.Module, Parameter and the containers against PyTorch's: registration, traversal, state_dict
keys and metadata, load_state_dict reports and messages, moves, modes, hooks, reprs."""

import copy
from collections import OrderedDict

import pytest
import torch

import torchweb as tw
from torchweb import nn


def _pair(build):
    """The same model built with torchweb and torch (build takes the nn namespace), with torch's
    weights copied from ours."""
    ours, theirs = build(nn), build(torch.nn)
    theirs.load_state_dict({k: torch.tensor(v.tolist()) for k, v in ours.state_dict().items()})
    return ours, theirs


class _Net:
    """A module class defined against either namespace, with buffers, nesting and tying."""

    @staticmethod
    def build(ns):
        class Block(ns.Module):
            def __init__(self):
                super().__init__()
                self.fc = ns.Linear(3, 4)
                self.register_buffer("steps", (tw if ns is nn else torch).zeros(2))
                self.register_buffer("scratch", (tw if ns is nn else torch).ones(1), persistent=False)

            def forward(self, x):
                return self.fc(x).tanh()

        class Net(ns.Module):
            def __init__(self):
                super().__init__()
                self.blocks = ns.ModuleList([Block(), Block()])
                self.head = ns.Sequential(OrderedDict(act=ns.Identity(),
                                                      out=ns.Linear(4, 2)))
                self.tied = self.head.out     # the same module twice
                self.scale = ns.Parameter((tw if ns is nn else torch).ones(2))

            def forward(self, x):
                for b in self.blocks:
                    x = b(x[..., :3])
                return self.head(x) * self.scale
        return Net()


def test_traversal_names_match_pytorch():
    ours, theirs = _pair(_Net.build)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert ([n for n, _ in ours.named_modules(remove_duplicate=False)]
            == [n for n, _ in theirs.named_modules(remove_duplicate=False)])
    assert ([n for n, _ in ours.named_parameters(remove_duplicate=False)]
            == [n for n, _ in theirs.named_parameters(remove_duplicate=False)])
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ([n for n, _ in ours.named_parameters(prefix="m", recurse=False)]
            == [n for n, _ in theirs.named_parameters(prefix="m", recurse=False)])
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))


def test_state_dict_keys_metadata_and_values():
    ours, theirs = _pair(_Net.build)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)
    assert sd._metadata == tsd._metadata
    for k in sd:
        assert sd[k].tolist() == tsd[k].tolist()
        assert not sd[k].requires_grad
    kept = ours.state_dict(keep_vars=True)
    assert kept["scale"] is ours.scale
    prefixed = ours.state_dict(prefix="model.")
    assert list(prefixed) == list(theirs.state_dict(prefix="model."))


def test_forward_matches_after_state_dict_copy(device):
    ours, theirs = _pair(_Net.build)
    ours.to(device)
    x = torch.randn(5, 3)
    got = ours(tw.tensor(x.tolist(), device=device))
    assert got.device.type == device
    assert torch.allclose(torch.tensor(got.tolist()), theirs(x), atol=1e-5)


def _load_error(model, sd, **kw):
    try:
        return model.load_state_dict(sd, **kw)
    except Exception as e:  # noqa: BLE001
        return (type(e), str(e))


@pytest.mark.parametrize("edit", ["missing", "unexpected", "shape", "not_tensor", "both"])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_reports_like_pytorch(edit, strict):
    ours, theirs = _pair(_Net.build)
    sd = OrderedDict((k, v.tolist()) for k, v in theirs.state_dict().items())
    if edit in ("missing", "both"):
        del sd["head.out.bias"]
    if edit in ("unexpected", "both"):
        sd["blocks.0.extra"] = [1.0]
        sd["nonsense"] = [2.0]
    if edit == "shape":
        sd["blocks.1.fc.weight"] = [[0.0] * 3]
    ours_sd = OrderedDict((k, tw.tensor(v)) for k, v in sd.items())
    theirs_sd = OrderedDict((k, torch.tensor(v)) for k, v in sd.items())
    if edit == "not_tensor":
        ours_sd["scale"] = theirs_sd["scale"] = 3
    a = _load_error(ours, ours_sd, strict=strict)
    b = _load_error(theirs, theirs_sd, strict=strict)
    if isinstance(b, tuple) and isinstance(b[0], type):
        assert a == b
    else:
        assert (a.missing_keys, a.unexpected_keys) == (b.missing_keys, b.unexpected_keys)
        assert repr(a) == repr(b)


def test_load_state_dict_copies_in_place_and_assign_replaces(device):
    m = nn.Linear(2, 3).to(device)
    w = m.weight
    new = {"weight": tw.ones(3, 2), "bias": tw.zeros(3)}   # a cpu checkpoint into a webgpu model
    m.load_state_dict(new)
    assert m.weight is w and m.weight.device.type == device
    assert m.weight.tolist() == [[1.0, 1.0]] * 3
    m.load_state_dict({"weight": tw.full((3, 2), 2.0, device=device), "bias": tw.zeros(3, device=device)},
                      assign=True)
    assert m.weight is not w and isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_setattr_registration_rules_match_pytorch():
    for ns, lib in ((nn, tw), (torch.nn, torch)):
        m = ns.Linear(2, 2)
        m.foo = ns.Parameter(lib.zeros(1))
        assert "foo" in dict(m.named_parameters())
        m.foo = None
        assert "foo" not in dict(m.named_parameters())
        m.sub = ns.Linear(1, 1)
        assert "sub" in dict(m.named_children())
        del m.sub
        assert not hasattr(m, "sub")
        m.register_buffer("b", lib.ones(1))
        m.b = lib.zeros(2)                  # assigning a tensor to a buffer name keeps it a buffer
        assert dict(m.named_buffers())["b"].shape == (2,)
    errors = []
    for ns, lib in ((nn, tw), (torch.nn, torch)):
        m = ns.Linear(2, 2)
        row = []
        for action in (lambda: setattr(m, "weight", lib.zeros(2, 2)),
                       lambda: m.register_buffer("a.b", None),
                       lambda: m.register_buffer("", None),
                       lambda: m.register_buffer("weight", lib.zeros(1)),
                       lambda: m.register_buffer("x", 3),
                       lambda: m.register_parameter("p", lib.zeros(1)),
                       lambda: m.add_module("m", 3),
                       lambda: m.nothing,
                       lambda: m.get_submodule("nope"),
                       lambda: m.get_parameter("nope")):
            try:
                action()
                row.append(None)
            except Exception as e:  # noqa: BLE001
                row.append((type(e), str(e).replace("torchweb", "torch")))
        errors.append(row)
    assert errors[0] == errors[1]


def test_parameter_semantics():
    t = tw.randn(2, 3)
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, tw.Tensor)
    with tw.no_grad():
        p.mul_(2)
    assert t.tolist() == p.tolist()                      # shares the storage, as PyTorch
    assert type(p * 2) is tw.Tensor
    assert repr(p).startswith("Parameter containing:\ntensor(")
    q = nn.Parameter(tw.zeros(1), requires_grad=False)
    assert not q.requires_grad
    r = copy.deepcopy(p)
    assert type(r) is nn.Parameter and r.tolist() == p.tolist()


def test_to_keeps_parameter_objects_and_converts_only_floats(device):
    m = nn.Linear(2, 2)
    m.register_buffer("count", tw.zeros(1, dtype=tw.int64))
    w = m.weight
    m.to(device).half()
    assert m.weight is w and m.weight.dtype == tw.float16 and m.weight.device.type == device
    assert m.count.dtype == tw.int64 and m.count.device.type == device
    m.float()
    assert m.weight.dtype == tw.float32
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(tw.int64)
    with pytest.raises(RuntimeError, match="float64"):   # (float64 is held on the host, for small work)
        m.double()
    m.cpu()
    assert m.weight.device.type == "cpu"


def test_train_eval_requires_grad_zero_grad():
    ours, theirs = _pair(_Net.build)
    ours.eval()
    assert [m.training for m in ours.modules()] == [False] * len(list(ours.modules()))
    ours.train()
    assert all(m.training for m in ours.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("yes")
    ours.requires_grad_(False)
    assert not any(p.requires_grad for p in ours.parameters())
    ours.requires_grad_(True)
    ours(tw.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in ours.parameters())
    ours.zero_grad(set_to_none=False)
    assert all(p.grad.abs().sum().item() == 0 for p in ours.parameters())
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())


def test_apply_and_missing_forward():
    seen = []
    m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.Identity()))
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Identity", "Sequential", "Sequential"]

    class NoForward(nn.Module):
        pass
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        NoForward()(tw.ones(1))


def test_reprs_match_pytorch():
    ours, theirs = _pair(_Net.build)
    assert repr(ours).replace("Net(", "X(") == repr(theirs).replace("Net(", "X(")
    ml = lambda ns: ns.ModuleList([ns.Linear(2, 2) for _ in range(3)] + [ns.Identity()])  # noqa: E731
    assert repr(ml(nn)) == repr(ml(torch.nn))
    pl = lambda ns, lib: ns.ParameterList([ns.Parameter(lib.ones(2, 3, device="cpu")),  # noqa: E731
                                           lib.zeros(1, device="cpu")])
    assert repr(pl(nn, tw)) == repr(pl(torch.nn, torch))
    pd = lambda ns, lib: ns.ParameterDict({"b": lib.ones(2, device="cpu"),  # noqa: E731
                                           "a": lib.zeros(1, device="cpu")})
    assert repr(pd(nn, tw)) == repr(pd(torch.nn, torch))


def test_sequential_and_modulelist_editing_match_pytorch():
    def ops(ns):
        s = ns.Sequential(ns.Linear(1, 2), ns.Identity(), ns.Linear(2, 3))
        out = [len(s), type(s[-1]).__name__, [type(x).__name__ for x in s[1:]]]
        del s[0]
        out.append(list(s._modules))
        s.append(ns.Identity())
        s.insert(0, ns.Linear(5, 1))
        out.append([type(x).__name__ for x in s])
        out.append(list(s._modules))
        s2 = s + ns.Sequential(ns.Identity())
        out.append(len(s2))
        out.append(type(s.pop(1)).__name__)
        ml = ns.ModuleList([ns.Identity(), ns.Linear(1, 1)])
        ml += [ns.Identity()]
        ml.insert(1, ns.Linear(2, 2))
        del ml[0]
        out.append([type(x).__name__ for x in ml])
        out.append(list(ml._modules))
        out.append(len(ml[1:]))
        md = ns.ModuleDict({"b": ns.Identity(), "a": ns.Linear(1, 1)})
        md.update([("c", ns.Identity())])
        out.append(list(md.keys()))
        out.append("a" in md)
        for bad in (lambda: s[10], lambda: ml[7], lambda: md.update([1])):
            try:
                bad()
                out.append(None)
            except Exception as e:  # noqa: BLE001
                out.append(type(e))
        return out
    assert ops(nn) == ops(torch.nn)


def test_parameter_containers_register_parameters():
    for ns, lib in ((nn, tw), (torch.nn, torch)):
        m = ns.Module()
        m.pl = ns.ParameterList([lib.ones(2), ns.Parameter(lib.zeros(3))])
        m.pd = ns.ParameterDict({"w": lib.ones(1)})
        m.pl.append(lib.ones(4))
        names = [n for n, _ in m.named_parameters()]
        assert names == ["pl.0", "pl.1", "pl.2", "pd.w"]
        assert all(isinstance(p, ns.Parameter) for p in m.parameters())
        assert len(m.pl) == 3 and m.pl[-1].shape == (4,)


def test_forward_hooks_match_pytorch():
    def run(ns, lib):
        log = []
        m = ns.Linear(2, 2)
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
        h3 = m.register_forward_pre_hook(lambda mod, args, kwargs: log.append(("kw", len(args))),
                                         with_kwargs=True, prepend=True)
        with torch.no_grad():
            m.weight.copy_(lib.eye(2)) if ns is torch.nn else None
        x = lib.ones(1, 2)
        with (tw.no_grad() if ns is nn else torch.no_grad()):
            m.weight.copy_(lib.eye(2))
            m.bias.zero_()
        y1 = m(x).tolist()
        h1.remove()
        h2.remove()
        y2 = m(x).tolist()
        h3.remove()
        return log, y1, y2
    assert run(nn, tw) == run(torch.nn, torch)


def test_full_backward_hooks_match_pytorch(device):
    def run(ns, lib, dev):
        m = ns.Linear(3, 2)
        with (tw.no_grad() if ns is nn else torch.no_grad()):
            m.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
            m.bias.fill_(0.25)
        m.to(dev)
        seen = []

        def rounded(g):
            return None if g is None else [round(v, 4) for v in g.flatten().tolist()]

        def hook(mod, grad_input, grad_output):
            seen.append(("hook", [rounded(g) for g in grad_input], [rounded(g) for g in grad_output]))
            return (grad_input[0] * 10,)

        def pre(mod, grad_output):
            seen.append(("pre", [rounded(g) for g in grad_output]))
        m.register_full_backward_hook(hook)
        m.register_full_backward_pre_hook(pre)
        x = lib.tensor([[1.0, -2.0, 0.5]], requires_grad=True, device=dev)
        m(x).pow(2).sum().backward()
        return seen, rounded(x.grad), rounded(m.weight.grad)
    assert run(nn, tw, device) == run(torch.nn, torch, "cpu")


def test_state_dict_and_load_hooks():
    m = nn.Linear(1, 1)
    calls = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", list(sd))))
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(("load", keys.missing_keys)))
    sd = m.state_dict()
    m.load_state_dict(sd)
    assert calls == [("pre", ""), ("post", ["weight", "bias"]), ("load", [])]


def test_deepcopy_module_is_independent():
    m = nn.Sequential(nn.Linear(2, 2))
    c = copy.deepcopy(m)
    with tw.no_grad():
        c[0].weight.add_(1)
    assert (c[0].weight - m[0].weight).abs().min().item() == pytest.approx(1.0, abs=1e-6)
