"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp), gradcheck/gradgradcheck
and the rest of torch.autograd's names, compared with PyTorch: each scenario runs with torch
and with torchweb (T is the module) and what it returns (tensors, flags, error messages) must
match."""

import math
import warnings

import pytest
import torch

import torchweb as tw
import torchweb.nn.functional  # noqa: F401
from oracle import assert_close, ours


def values(shape, scale=1.0, shift=0.0):
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(0.9 * i + 0.4) + shift for i in range(n)]).reshape(shape)


def const(T, dev, t):
    return t.clone() if T is torch else ours(t, dev)


def compare(got, expected, where="result"):
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, tw.Tensor), f"{where}: {got!r} is not a tensor"
        assert_close(got, expected.detach(), rtol=1e-4, atol=1e-4)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        assert type(got) is type(expected), f"{where}: {type(got)} vs {type(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            compare(g, e, f"{where}[{i}]")
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def both(scenario, device):
    compare(scenario(tw, device), scenario(torch, "cpu"))


def error_of(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001  (the type and message are compared)
        return type(e).__name__, str(e)
    return None


def f_single(x):
    return (x.sin() * x).sum() + (x ** 3).prod()


def f_pair(x, y):
    return (x * y.exp()).sum() + (x @ y) ** 2


def f_vector(x):
    return x.tanh() * x.sum()


def f_two_outputs(x, y):
    return x * y, (x ** 2).sum() + y.cos()


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian(create_graph, device):
    def scenario(T, dev):
        x, y = const(T, dev, values((3,))), const(T, dev, values((3,), 0.5, 0.2))
        F = T.autograd.functional
        single = F.jacobian(f_vector, x, create_graph=create_graph)
        pairs = F.jacobian(f_two_outputs, (x, y), create_graph=create_graph)
        vec = F.jacobian(f_vector, x, vectorize=True)
        return single, pairs, vec, single.requires_grad
    both(scenario, device)


def test_hessian(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((3,))), const(T, dev, values((3,), 0.5, 0.2))
        F = T.autograd.functional
        return F.hessian(f_single, x), F.hessian(f_pair, (x, y)), F.hessian(f_single, x, vectorize=True)
    both(scenario, device)


def test_vjp_jvp_hvp_vhp(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((3,))), const(T, dev, values((3,), 0.5, 0.2))
        v, w = const(T, dev, values((3,), 1.0, -0.3)), const(T, dev, values((3,), 0.7, 0.1))
        F = T.autograd.functional
        return (F.vjp(f_vector, x, v), F.jvp(f_vector, x, v), F.jvp(f_two_outputs, (x, y), (v, w)),
                F.vjp(f_two_outputs, (x, y), (v, w)), F.hvp(f_single, x, v), F.vhp(f_single, x, v),
                F.hvp(f_pair, (x, y), (v, w)), F.vhp(f_pair, (x, y), (v, w)),
                F.vjp(lambda a: a.sum() * 2, x))
    both(scenario, device)


def test_functional_create_graph_gives_differentiable_results(device):
    def scenario(T, dev):
        x = const(T, dev, values((3,))).requires_grad_(True)
        v = const(T, dev, values((3,), 1.0, -0.3))
        _, hv = T.autograd.functional.hvp(f_single, x, v, create_graph=True)
        _, jv = T.autograd.functional.jvp(f_vector, x, v, create_graph=True)
        return hv.requires_grad, T.autograd.grad((hv * hv).sum() + jv.sum(), x)[0]
    both(scenario, device)


def test_functional_errors_match(device):
    def scenario(T, dev):
        x = const(T, dev, values((3,)))
        y = const(T, dev, values((2,)))
        F = T.autograd.functional
        return [error_of(fn) for fn in (
            lambda: F.vjp(f_vector, x),                             # v None, non-scalar output
            lambda: F.jvp(f_vector, x, y),                          # v of the wrong size
            lambda: F.hessian(f_vector, x),                         # not a scalar function
            lambda: F.hvp(lambda a: (a, a), x, x),
            lambda: F.jacobian(f_vector, [x]),                      # a list: TypeError
            lambda: F.jacobian(lambda a: x.detach() * 2, x, strict=True),
            lambda: F.vjp(lambda a: a.detach().sum(), x, strict=True),
            lambda: F.hessian(lambda a: (a * 2).sum(), x, strict=True),
            lambda: F.jacobian(f_vector, x, strategy="forward-mode"),
            lambda: F.jacobian(f_vector, x, strategy="sideways"),
        )]
    both(scenario, device)


# -- gradcheck ----------------------------------------------------------------------------------
def _leaf(dev, t):
    return ours(t, dev, requires_grad=True)


def test_gradcheck_passes_on_good_functions(device):
    x, w = _leaf(device, values((2, 3))), _leaf(device, values((3, 2), 0.6))
    F = tw.nn.functional
    assert tw.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert tw.autograd.gradcheck(lambda a: F.log_softmax(a, 1) * a.exp(), x)
    assert tw.autograd.gradgradcheck(lambda a, b: (a @ b).sigmoid(), (x, w))
    assert tw.autograd.gradgradcheck(lambda a: F.softmax(a, 1) * a.sin(), (x,))
    assert tw.autograd.gradcheck(lambda a: F.layer_norm(a, (3,)), x, check_forward_ad=True)


class _WrongSquare(tw.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a          # should be 2 * a


class _DetachedCube(tw.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 3 * a.detach() ** 2    # right first derivative, no second one


def test_gradcheck_reports_a_wrong_backward(device):
    x = _leaf(device, values((2, 3)))
    assert tw.autograd.gradcheck(_WrongSquare.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0") as e:
        tw.autograd.gradcheck(_WrongSquare.apply, (x,))
    assert type(e.value).__name__ == "GradcheckError"
    assert tw.autograd.gradcheck(_DetachedCube.apply, (x,))
    assert tw.autograd.gradgradcheck(_DetachedCube.apply, (x,), raise_exception=False) is False


def test_gradcheck_errors_match(device):
    def scenario(T, dev):
        x = const(T, dev, values((3,)))
        return [error_of(lambda: T.autograd.gradcheck(lambda a: a * 2, (x,)))]
    both(scenario, device)


# -- the rest of torch.autograd ---------------------------------------------------------------
def test_variable_and_is_tensor_like(device):
    def scenario(T, dev):
        t = const(T, dev, values((3,)))
        v = T.autograd.Variable(t, requires_grad=True)
        return (v is t, v.requires_grad, t.requires_grad, isinstance(t, T.autograd.Variable),
                isinstance(3, T.autograd.Variable), T.autograd.is_tensor_like(t), T.autograd.is_tensor_like([1]),
                error_of(lambda: T.autograd.variable(1.0)))
    both(scenario, device)


def test_detect_anomaly_names_the_node_with_nan(device):
    def scenario(T, dev):
        x = const(T, dev, torch.tensor([0.0, 1.0])).requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with T.autograd.detect_anomaly():
                y = x.sqrt() * 0     # sqrt's backward: 0 / 0 at x = 0
                err = error_of(lambda: y.sum().backward())
        T.autograd.set_detect_anomaly(True, check_nan=False)
        flags = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        (x.sqrt() * 0).sum().backward()
        T.autograd.set_detect_anomaly(False)
        T.set_anomaly_enabled(True)
        flags += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
        T.set_anomaly_enabled(False)
        return err, x.grad.isnan().tolist(), flags, T.is_anomaly_enabled()
    both(scenario, device)


def test_engine_switches(device):
    def scenario(T, dev):
        A = T.autograd
        with A.set_multithreading_enabled(False):
            off = A.is_multithreading_enabled()
        with A.enforce_grad_layout_policy(False):
            x = const(T, dev, values((2, 3))).requires_grad_(True)
            (x * 2).sum().backward()
        return (off, A.is_multithreading_enabled(), A.is_view_replay_enabled(), x.grad,
                A.kineto_available() if T is tw else False)
    both(scenario, device)


def test_graph_namespace(device):
    def scenario(T, dev):
        G = T.autograd.graph
        x = const(T, dev, values((3,))).requires_grad_(True)
        with G.saved_tensors_hooks(lambda t: t, lambda t: t), G.save_on_cpu():
            y = (x * x).exp()
        edge = G.get_gradient_edge(y)
        leaf_edge = G.get_gradient_edge(x)
        y.sum().backward()
        return (isinstance(y.grad_fn, G.Node), isinstance(leaf_edge.node, G.Node), edge.node is y.grad_fn,
                edge.output_nr, x.grad)
    both(scenario, device)


def test_refused_names_say_why():
    for name in ("ProfilerActivity", "profiler", "NestedIOFunction"):
        assert not hasattr(tw.autograd, name)
        with pytest.raises(AttributeError, match=name):
            getattr(tw.autograd, name)


def test_forward_ad_dual_tensors(device):
    def scenario(T, dev):
        fwAD = T.autograd.forward_ad
        x = const(T, dev, values((3,)))
        w = const(T, dev, values((2, 3), 0.5))
        tx, tw_ = const(T, dev, values((3,), 1.0, 0.3)), const(T, dev, values((2, 3), 0.2))
        errors = [error_of(lambda: fwAD.make_dual(x, tx))]
        with fwAD.dual_level():
            errors.append(error_of(lambda: fwAD.make_dual(x, w)))
            errors.append(error_of(lambda: fwAD.enter_dual_level()))
            dx, dw = fwAD.make_dual(x, tx), fwAD.make_dual(w, tw_)
            y = T.nn.functional.softmax(dw @ dx.sin(), 0) * (dx * dx).sum()
            p, t = fwAD.unpack_dual(y)
            same = fwAD.unpack_dual(dx).tangent
            plain = fwAD.unpack_dual(x).tangent
            const_only = fwAD.unpack_dual(x * 2).tangent
        after = fwAD.unpack_dual(y).tangent
        return errors, p, t, same, plain, const_only, after, type(fwAD.unpack_dual(y)).__name__
    both(scenario, device)


def test_grad_is_grads_batched(device):
    def scenario(T, dev):
        x = const(T, dev, values((3,))).requires_grad_(True)
        y = x.sin() * x.sum()
        basis = const(T, dev, torch.eye(3))
        rows, = T.autograd.grad(y, x, basis, is_grads_batched=True)
        return rows, T.autograd.functional.jacobian(lambda a: a.sin() * a.sum(), x.detach())
    both(scenario, device)


class _Overrides:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func.__name__, len(args), [t.__name__ for t in types])


def test_torch_function_helpers(device):
    def scenario(T, dev):
        def api(a, b):
            return a
        t = const(T, dev, values((2,)))
        o = _Overrides()
        return (T.autograd.has_torch_function((t,)), T.autograd.has_torch_function((t, o)),
                T.autograd.handle_torch_function(api, (o,), o, 3))
    both(scenario, device)
