"""torch.func's differentiating transforms (grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd, hessian) and its module helpers against PyTorch 2.13: each scenario runs with torch and
with torchweb (T is the module) on both devices, and what it returns (tensors, structures,
requires_grad flags, error types and messages) must match."""

import collections
import pytest
import torch

import torchweb as tw
from oracle import assert_close, ours
from test_autograd_functional import values, const, error_of  # noqa: F401  (test_func_vmap imports them from here)


def compare(got, expected, where="result"):
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, tw.Tensor), f"{where}: {got!r} is not a tensor"
        assert_close(got, expected.detach(), rtol=1e-4, atol=1e-4)
    elif isinstance(expected, (list, tuple)):
        assert type(got) is type(expected) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            compare(g, e, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and list(got) == list(expected), f"{where}: keys {list(got)} vs {list(expected)}"
        for k in expected:
            compare(got[k], expected[k], f"{where}[{k!r}]")
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def both(scenario, device):
    compare(scenario(tw, device), scenario(torch, "cpu"))


def same_error(scenario, device):
    got, expected = scenario(tw, device), scenario(torch, "cpu")
    assert expected is not None and got == expected, f"\n got      {got}\n expected {expected}"


def f_scalar(x, y):
    return (x.sin() * y).sum() + (x ** 2).sum() * y.exp().sum()


def f_vector(x):
    return x.tanh() * x.sum()


# -- grad, grad_and_value ---------------------------------------------------------------------

def test_grad_argnums_and_values(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((2, 3))), const(T, dev, values((2, 3), 0.5, 0.2))
        F = T.func
        gx = F.grad(f_scalar)(x, y)
        gy = F.grad(f_scalar, argnums=1)(x, y)
        gxy = F.grad(f_scalar, argnums=(0, 1))(x, y)
        g_neg = F.grad(f_scalar, argnums=-1)(x, y)
        g, v = F.grad_and_value(f_scalar, argnums=(1,))(x, y)
        return gx, gy, gxy, g_neg, g, v, gx.requires_grad, v.requires_grad
    both(scenario, device)


def test_grad_of_pytrees_and_kwargs(device):
    Pair = collections.namedtuple("Pair", "a b")

    def scenario(T, dev):
        p = {"w": const(T, dev, values((3, 2))), "rest": [const(T, dev, values((2,), 0.3)),
                                                        Pair(const(T, dev, values((2,), 0.4, 0.1)), const(T, dev, torch.tensor(2.0)))]}
        x = const(T, dev, values((4, 3), 0.9))

        def loss(params, x, scale=1.0):
            h = (x @ params["w"]).relu() + params["rest"][0]
            pair = params["rest"][1]
            return scale * ((h * pair.a) ** 2).mean() + pair.b

        g = T.func.grad(loss)(p, x, scale=3.0)
        return g["w"], g["rest"][0], g["rest"][1].a, g["rest"][1].b, type(g["rest"][1]).__name__
    both(scenario, device)


def test_grad_has_aux(device):
    def scenario(T, dev):
        x = const(T, dev, values((5,)))

        def f(x):
            y = x.exp()
            return y.sum(), {"y": y, "n": (y * 2,)}
        g, aux = T.func.grad(f, has_aux=True)(x)
        (g2, (v, aux2)) = T.func.grad_and_value(f, has_aux=True)(x)
        return g, aux["y"], aux["n"], aux["y"].requires_grad, g2, v, aux2["y"]
    both(scenario, device)
    # aux holds tensors only
    same_error(lambda T, dev: error_of(lambda: T.func.grad(lambda a: (a.sum(), 3), has_aux=True)(
        const(T, dev, values((2,))))), device)


def test_nested_grad_gives_higher_derivatives(device):
    def scenario(T, dev):
        F = T.func
        x = const(T, dev, torch.tensor(0.7))
        d1 = F.grad(lambda a: a.sin() * a ** 3)(x)
        d2 = F.grad(F.grad(lambda a: a.sin() * a ** 3))(x)
        d3 = F.grad(F.grad(F.grad(lambda a: a.sin() * a ** 3)))(x)
        # the inner function closes over the outer variable: d/dx of (d/dy (x*y^2)) = 2y
        y = const(T, dev, torch.tensor(1.5))
        mixed = F.grad(lambda a: F.grad(lambda b: a * b ** 2)(y) * a)(x)
        # an inner aux that depends on the outer variable stays differentiable by the outer grad
        through_aux = F.grad(lambda a: F.grad(lambda b: (b ** 2, (a * b).exp()), has_aux=True)(y)[1])(x)
        return d1, d2, d3, mixed, through_aux, d2.requires_grad
    both(scenario, device)


def test_grad_of_leaves_that_require_grad_stays_differentiable(device):
    def scenario(T, dev):
        w = const(T, dev, values((3,))).requires_grad_()
        g = T.func.grad(lambda a: (a ** 3).sum())(w)
        g.sum().backward()
        with T.no_grad():
            g_off = T.func.grad(lambda a: (a ** 3).sum())(w)
        return g, g.requires_grad, w.grad, g_off, g_off.requires_grad
    both(scenario, device)


def test_grad_errors(device):
    for case in (lambda T, x: T.func.grad(lambda a: a)(x),                      # not a scalar
                 lambda T, x: T.func.grad(lambda a: 3)(x),                      # not a tensor
                 lambda T, x: T.func.grad(lambda a: a.sum(), has_aux=True)(x),  # no aux
                 lambda T, x: T.func.grad(lambda a: a.sum(), argnums=2)(x),
                 lambda T, x: T.func.grad(lambda a: a.sum(), argnums=[0])(x),
                 lambda T, x: T.func.grad(lambda a: a.sum(), argnums=(0, 0))(x),
                 lambda T, x: T.func.grad(lambda a: a.sum(), argnums=())(x),
                 lambda T, x: T.func.grad(lambda a: a.sum())(3.0),
                 lambda T, x: T.func.grad(lambda a: a.sum())()):
        same_error(lambda T, dev: error_of(lambda: case(T, const(T, dev, values((3, 2))))), device)


# -- vjp, jvp, linearize ------------------------------------------------------------------------

def test_vjp(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((2, 3))), const(T, dev, values((3,), 0.5))
        out, fn = T.func.vjp(lambda a, b: (a * b, (a.sum(1), b.exp())), x, y)
        ct = (const(T, dev, values((2, 3), 0.2)), (const(T, dev, values((2,))), const(T, dev, values((3,), 0.1))))
        first = fn(ct)
        again = fn(ct)        # vjp_fn can run again
        out2, fn2, aux = T.func.vjp(lambda a: (a.cos(), a.detach() * 2), x, has_aux=True)
        return out, first, again, fn2(const(T, dev, values((2, 3)))), aux, out[0].requires_grad
    both(scenario, device)


def test_vjp_errors(device):
    for case in (lambda T, x: T.func.vjp(lambda a: a, x)[1](torch.ones(1) if T is torch else tw.ones(1)),
                 lambda T, x: T.func.vjp(lambda a: a, x)[1]((x,)),
                 lambda T, x: T.func.vjp(lambda a: 3, x),
                 lambda T, x: T.func.vjp(lambda a: a.sum(), x, has_aux=True)):
        same_error(lambda T, dev: error_of(lambda: case(T, const(T, dev, values((3, 4))))), device)


def test_jvp_and_linearize(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((2, 3))), const(T, dev, values((2, 3), 0.5))
        tx, ty = const(T, dev, values((2, 3), 0.3, 0.1)), const(T, dev, values((2, 3), 0.2))
        out, t = T.func.jvp(lambda a, b: (a * b.sin(), a.sum()), (x, y), (tx, ty))
        out2, t2, aux = T.func.jvp(lambda a: (a.exp(), {"a": a * 3}), (x,), (tx,), has_aux=True)
        const_out = T.func.jvp(lambda a: a.detach() * 2 + 1, (x,), (tx,))   # independent of the input
        val, jvp_fn = T.func.linearize(lambda a: (a ** 3).tanh(), x)
        return out, t, out2, t2, aux["a"], const_out, val, jvp_fn(tx), jvp_fn(ty)
    both(scenario, device)


def test_jvp_errors(device):
    for case in (lambda T, x, y: T.func.jvp(lambda a: a, x, x),
                 lambda T, x, y: T.func.jvp(lambda a: a, (x,), (x, x)),
                 lambda T, x, y: T.func.jvp(lambda a: a, (x,), [x]),
                 lambda T, x, y: T.func.jvp(lambda a: a, (x,), (y,)),
                 lambda T, x, y: T.func.jvp(lambda a: 3, (x,), (x,))):
        same_error(lambda T, dev: error_of(lambda: case(T, const(T, dev, values((3, 4))),
                                                        const(T, dev, values((4, 4))))), device)


# -- jacrev, jacfwd, hessian ------------------------------------------------------------------

@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians(device, jac):
    def scenario(T, dev):
        J = getattr(T.func, jac)
        x, y = const(T, dev, values((3,))), const(T, dev, values((2, 3), 0.5))
        j0 = J(f_vector)(x)
        j01 = J(lambda a, b: b @ a.exp(), argnums=(0, 1))(x, y)
        jtree = J(lambda d: {"s": (d["a"] * d["b"]).sum(), "v": d["a"].sin()})({"a": x, "b": x * 2})
        jaux = J(lambda a: (a ** 2, a.sum()), has_aux=True)(x)
        jnest = J(lambda a: (a.sin(), (a * 2).sum()))(x)
        return j0, j01, jtree, jaux, jnest
    both(scenario, device)


def test_hessian_and_compositions(device):
    def scenario(T, dev):
        F = T.func
        x, y = const(T, dev, values((3,))), const(T, dev, values((3,), 0.5))

        def f(a, b):
            return (a.sin() * b).sum() + (a ** 2 * b ** 2).sum()
        return (F.hessian(f)(x, y), F.hessian(f, argnums=(0, 1))(x, y),
                F.jacfwd(F.jacfwd(f))(x, y), F.jacrev(F.jacrev(f))(x, y), F.jacfwd(F.jacrev(f, 1), 0)(x, y))
    both(scenario, device)


def test_jacfwd_randomness_and_chunk_size(device):
    same_error(lambda T, dev: error_of(lambda: T.func.jacfwd(lambda a: a * T.rand(3, device=dev))(
        const(T, dev, values((3,))))), device)
    same_error(lambda T, dev: error_of(lambda: T.func.jacrev(lambda a: a, chunk_size=0)), device)

    def scenario(T, dev):
        x = const(T, dev, values((4,)))
        return T.func.jacrev(f_vector, chunk_size=2)(x), T.func.jacfwd(lambda a: a * 0 + a.exp(), randomness="same")(x)
    both(scenario, device)


# -- functional_call, stack_module_state, the rest ----------------------------------------------

def _linear_pair(T, dev):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    if T is torch:
        return ref
    m = tw.nn.Sequential(tw.nn.Linear(3, 4), tw.nn.BatchNorm1d(4)).to(dev)
    m.load_state_dict({k: ours(v, dev) for k, v in ref.state_dict().items()})
    return m


def test_functional_call(device):
    def scenario(T, dev):
        m = _linear_pair(T, dev)
        x = const(T, dev, values((5, 3)))
        w = {"0.weight": const(T, dev, values((4, 3), 0.3)), "0.bias": const(T, dev, values((4,), 0.2))}
        bufs = {"1.running_mean": const(T, dev, values((4,), 0.1))}
        out1 = T.func.functional_call(m, w, (x,))
        out2 = T.func.functional_call(m, (w, bufs), x)
        out3 = T.func.functional_call(m, [w], args=(), kwargs={"input": x})
        m.eval()
        out4 = T.func.functional_call(m, (w, bufs), (x,), strict=False, tie_weights=False)
        return out1, out2, out3, out4, m[0].weight, m[1].running_mean
    both(scenario, device)


def test_functional_call_errors(device):
    def case(T, dev, which):
        m, x = _linear_pair(T, dev), const(T, dev, values((2, 3)))
        w = const(T, dev, values((4, 3)))
        F = T.func
        return error_of([lambda: F.functional_call(m, {"0.weight": w, "foo": w}, (x,), strict=True),
                         lambda: F.functional_call(m, ({"0.weight": w}, {"0.weight": w}), (x,)),
                         lambda: F.functional_call(m, [{"0.weight": w}, 3], (x,)),
                         lambda: F.functional_call(m, 3, (x,))][which])
    for which in range(4):
        same_error(lambda T, dev: case(T, dev, which), device)


def test_stack_module_state(device):
    def scenario(T, dev):
        models = [_linear_pair(T, dev) for _ in range(3)]
        params, buffers = T.func.stack_module_state(models)
        return (params, buffers, [p.requires_grad for p in params.values()],
                [p.is_leaf for p in params.values()])
    both(scenario, device)

    def errors(T, dev):
        nn = T.nn
        return (error_of(lambda: T.func.stack_module_state([])),
                error_of(lambda: T.func.stack_module_state([nn.Linear(2, 2), nn.Linear(2, 2).eval()])),
                error_of(lambda: T.func.stack_module_state([nn.Linear(2, 2), nn.Conv1d(2, 2, 1)])),
                error_of(lambda: T.func.stack_module_state([nn.Linear(2, 2), nn.Linear(2, 2).requires_grad_(False)])))
    compare(errors(tw, device), errors(torch, "cpu"))


def test_replace_all_batch_norm_modules_functionalize_debug_unwrap(device):
    def scenario(T, dev):
        m = _linear_pair(T, dev)
        assert T.func.replace_all_batch_norm_modules_(m) is m
        x = const(T, dev, values((4, 3)))
        f = T.func.functionalize(lambda a: a.clone().add_(1).mul(2))
        return (m[1].running_mean, m[1].track_running_stats, m(x), f(x), T.func.debug_unwrap(x),
                error_of(lambda: T.func.functionalize(f, remove="views")))
    both(scenario, device)


def test_namespace():
    import importlib
    assert tw.func is importlib.import_module("torchweb.func")
    assert tw.vmap is tw.func.vmap and hasattr(tw, "vmap") and hasattr(tw, "func")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_transform'"):
        tw.func.no_such_transform


@pytest.mark.parametrize("pattern, lengths", [
    ("b c h -> b (c h)", {}), ("b (h1 h2) w -> b h1 h2 w", {"h1": 3}), ("b ... -> ... b", {}),
    ("b c h -> (b c) 1 h", {}), ("b c h -> h () c b", {}), ("b (c h) w -> (w b) c h", {"h": 2}),
    ("... h -> (...) h", {}), ("b c h -> b c h", {}), ("a b (c d) -> (d a) (b c)", {"d": 2}),
])
def test_rearrange(device, pattern, lengths):
    def scenario(T, dev):
        x = const(T, dev, values((2, 6, 4)))
        return T.func.rearrange(x, pattern, **lengths)
    both(scenario, device)
    # a list of tensors is stacked first
    both(lambda T, dev: T.func.rearrange([const(T, dev, values((6, 4))), const(T, dev, values((6, 4), 0.5))],
                                         "n c h -> c (n h)"), device)


@pytest.mark.parametrize("pattern, lengths", [
    ("b c -> c b", {}), ("b c h -> c b", {}), ("b c h -> b c", {"q": 2}), ("b c h c2 -> b c", {}),
    ("b c h", {}), ("b c h -> b c h ...", {}), ("b c h -> b c (h", {}), ("b c h -> b c h 2", {}),
    ("b c c -> b c", {}),
])
def test_rearrange_errors(device, pattern, lengths):
    same_error(lambda T, dev: error_of(lambda: T.func.rearrange(const(T, dev, values((2, 3, 4))), pattern,
                                                                **lengths)), device)


def test_rearrange_two_unknown_lengths_in_a_group(device):
    # (PyTorch raises functorch.dim's DimensionBindError, which torchweb does not have)
    with pytest.raises(ValueError, match="Could not infer sizes for"):
        tw.func.rearrange(ours(values((2, 3, 4)), device), "b c (h w) -> b c h w")
