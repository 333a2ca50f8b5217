"""Graph-level autograd behaviour compared with PyTorch: each scenario runs once with torch
and once with torchweb (T is the module) and what it returns (tensors, flags, names, error
messages) must match."""

import warnings

import pytest
import torch

import torchweb as tw
import torchweb.nn.functional  # noqa: F401  (T.nn.functional for both libraries)
from oracle import assert_close, ours

torch.manual_seed(0)
A = torch.randn(3, 4)
B = torch.randn(3, 4)
V = torch.randn(4)
G = torch.randn(3, 4)


def leaf(T, dev, t, requires_grad=True):
    if T is torch:
        return t.clone().requires_grad_(requires_grad)
    return ours(t, dev, requires_grad)


def const(T, dev, t):
    return leaf(T, dev, t, False)


def compare(got, expected, where="result"):
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, tw.Tensor), f"{where}: {got!r} is not a tensor"
        assert_close(got, expected.detach(), rtol=1e-4, atol=1e-5)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            compare(g, e, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert got.keys() == expected.keys(), where
        for k in expected:
            compare(got[k], expected[k], f"{where}[{k!r}]")
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def both(scenario, device):
    expected = scenario(torch, "cpu")
    got = scenario(tw, device)
    compare(got, expected)
    return got


def error(fn):
    """(exception type name, message) that fn raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the comparison is the test
        return type(e).__name__, str(e)
    return None


# -- graph shapes -------------------------------------------------------------------------------
def test_two_branches(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        a = x * 2
        b = x.exp()
        (a * b + x).sum().backward()
        return x.grad
    both(s, device)


def test_diamond(device):
    def s(T, dev):
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        y = x * w
        left, right = y.sin(), y.cos() * 3
        z = (left * right).sum() + y.sum()
        z.backward()
        return x.grad, w.grad
    both(s, device)


def test_detach_inside_graph(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 2
        d = y.detach()
        z = (d * x + y).sum()
        z.backward()
        return x.grad, d.requires_grad, d.is_leaf, d.grad_fn is None, y.requires_grad
    both(s, device)


def test_detach_shares_storage_and_cuts_views(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 1
        d = y[0].detach()
        y.mul_(2)            # d sees the new values but takes no history from y
        return d * 1, d.requires_grad, d.grad_fn is None
    both(s, device)


def test_deep_chain_each_node_once(device):
    def s(T, dev):
        x = leaf(T, dev, V)
        y = x
        for _ in range(30):
            y = y * 1.01 + y * 0.01   # every node reached by two paths
        y.sum().backward()
        return x.grad
    both(s, device)


# -- grad modes -------------------------------------------------------------------------------
def test_no_grad_region(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        with T.no_grad():
            y = x * 2
            inner = T.is_grad_enabled()
        z = (y * x).sum()
        z.backward()
        return y.requires_grad, y.grad_fn is None, inner, T.is_grad_enabled(), x.grad
    both(s, device)


def test_enable_grad_inside_no_grad(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        with T.no_grad():
            with T.enable_grad():
                y = x * 2
            z = x * 3
        return y.requires_grad, z.requires_grad, y.grad_fn.name()
    both(s, device)


def test_set_grad_enabled_forms(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        out = []
        with T.set_grad_enabled(False):
            out.append((x * 2).requires_grad)
            with T.set_grad_enabled(True):
                out.append((x * 2).requires_grad)
        T.set_grad_enabled(False)      # as a plain call
        out.append((x * 2).requires_grad)
        T.set_grad_enabled(True)
        out.append((x * 2).requires_grad)

        @T.no_grad()
        def f(a):
            return a * 2

        @T.set_grad_enabled(False)
        def g(a):
            return a * 2

        @T.enable_grad()
        def h(a):
            return a * 2
        out.append(f(x).requires_grad)
        out.append(g(x).requires_grad)
        with T.no_grad():
            out.append(h(x).requires_grad)
        out.append(T.is_grad_enabled())
        return out
    both(s, device)


def test_inference_mode(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        with T.inference_mode():
            y = x * 2
            inner = T.is_grad_enabled()
        with T.inference_mode(False):
            z = x * 2

        @T.inference_mode()
        def f(a):
            return a * 2
        return y.requires_grad, inner, z.requires_grad, f(x).requires_grad, T.is_grad_enabled(), y
    both(s, device)


def test_grad_mode_restored_after_exception(device):
    def s(T, dev):
        try:
            with T.no_grad():
                raise ValueError("boom")
        except ValueError:
            pass
        return T.is_grad_enabled()
    both(s, device)


# -- requires_grad propagation and attributes ---------------------------------------------------
def test_requires_grad_propagation(device):
    def s(T, dev):
        x, c = leaf(T, dev, A), const(T, dev, B)
        y = x + c
        vals, idx = y.max(1)
        return {
            "leaf": (x.requires_grad, x.is_leaf, x.grad_fn is None),
            "const": (c.requires_grad, c.is_leaf),
            "mixed": (y.requires_grad, y.is_leaf, y.grad_fn is not None),
            "const_op": ((c * 2).requires_grad, (c * 2).is_leaf),
            "compare": (y > 0).requires_grad,
            "argmax": y.argmax().requires_grad,
            "max_values_indices": (vals.requires_grad, idx.requires_grad),
            "to_int": y.to(T.int64).requires_grad,
            "to_half": y.to(T.float16).requires_grad,
            "view_of_leaf": (x[0].requires_grad, x[0].is_leaf, x.t().is_leaf),
            "detach": (y.detach().requires_grad, y.detach().is_leaf),
        }
    both(s, device)


def test_requires_grad_flag_setting(device):
    def s(T, dev):
        x = const(T, dev, A)
        x.requires_grad = True
        a = x.requires_grad
        x.requires_grad_(False)
        b = x.requires_grad
        y = leaf(T, dev, A) * 2
        return a, b, error(lambda: y.requires_grad_(False)), y.requires_grad_(True) is y
    both(s, device)


def test_next_functions_and_accumulate_grad(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 2
        fn, nr = y.grad_fn.next_functions[0]
        none_edge = y.grad_fn.next_functions[1]
        return fn.name(), nr, fn.variable is x, none_edge
    both(s, device)


def test_view_nodes_have_one_next_function(device):
    """A view's node has its input as its one next function, as PyTorch's ViewBackward0 (the
    shape and strides are not inputs), and its node hooks see one gradient."""
    def s(T, dev):
        x = leaf(T, dev, A)
        seen = []
        y = x.reshape(12)
        y.grad_fn.register_hook(lambda grads, outs: seen.append(len(grads)))
        z = (y * 3).view(2, 6).t().transpose(0, 1).unsqueeze(0)
        chain, node = [], z.grad_fn
        while node is not None and node.name() != "torch::autograd::AccumulateGrad":
            chain.append((node.name(), len(node.next_functions)))
            node = node.next_functions[0][0]
        z.sum().backward()
        return chain, seen, x.grad
    both(s, device)


# -- backward: retain_graph, accumulation, gradient= ---------------------------------------------
def test_second_backward_raises(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = (x.exp() * 2).sum()
        y.backward()
        return error(lambda: y.backward())
    got = both(s, device)
    assert got[0] == "RuntimeError" and "Trying to backward through the graph a second time" in got[1]


def test_second_backward_of_scalar_mul_raises(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = (x * 2).sum()     # PyTorch saves the number 2: the node can't run twice
        y.backward()
        return error(lambda: y.backward())
    both(s, device)


def test_second_backward_without_saved_values_runs(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = (x + 2).sum()    # nothing saved: a second backward is allowed and accumulates
        y.backward()
        y.backward()
        return x.grad
    both(s, device)


def test_retain_graph_twice(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = (x.exp() * x.sin()).sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward(retain_graph=True)
        y.backward()
        return g1, x.grad, error(lambda: y.backward())
    both(s, device)


def test_grad_accumulates_across_calls_in_place(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        (x * 3).sum().backward()
        first = x.grad
        (x * x).sum().backward()
        return first is x.grad, x.grad, first
    both(s, device)


def test_grad_zeroing_and_none(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        (x * 3).sum().backward()
        x.grad.zero_()
        (x * 2).sum().backward()
        g = x.grad.clone()
        x.grad = None
        (x.exp()).sum().backward()
        return g, x.grad
    both(s, device)


def test_backward_with_gradient_on_non_scalar(device):
    def s(T, dev):
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        y = x * w
        y.backward(gradient=const(T, dev, G))
        z = (x.exp() + w)
        T.autograd.backward(z, const(T, dev, G))
        return x.grad, w.grad
    both(s, device)


def test_backward_of_leaf_itself(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        x.backward(const(T, dev, G))
        return x.grad
    both(s, device)


def test_backward_inputs_argument(device):
    def s(T, dev):
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        y = x * 2
        y.retain_grad()
        (y * w).sum().backward(inputs=[w])
        w_only = (x.grad, w.grad)
        (y.exp() * w).sum().backward(inputs=[x])
        return w_only, x.grad, w.grad
    both(s, device)


def test_backward_multiple_roots(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        a, b = (x * 2).sum(), x.exp().sum()
        T.autograd.backward([a, b])
        return x.grad
    both(s, device)


# -- hooks and retain_grad ------------------------------------------------------------------------
def test_hooks_on_leaf_and_non_leaf(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        seen = []
        x.register_hook(lambda g: g * 2)
        y = x * 3
        y.register_hook(lambda g: seen.append(g.clone()))   # returns None: grad unchanged
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        return x.grad, seen
    both(s, device)


def test_hook_removal(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        h = x.register_hook(lambda g: g * 100)
        h.remove()
        (x * 2).sum().backward()
        return x.grad
    both(s, device)


def test_hook_on_tensor_without_grad(device):
    def s(T, dev):
        return error(lambda: const(T, dev, A).register_hook(lambda g: g))
    both(s, device)


def test_retain_grad(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 2
        y.retain_grad()
        z = y.exp()
        z.retain_grad()
        w = z.sum()
        w.backward(retain_graph=True)
        first = y.grad.clone()
        w.backward()
        x.retain_grad()   # a no-op on a leaf
        return first, y.grad, z.grad, x.grad, y.retains_grad, x.retains_grad, w.retains_grad
    both(s, device)


def test_retain_grad_and_hook_across_inplace(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 2
        y.retain_grad()            # follows y to its new version
        seen = []
        y.register_hook(lambda g: seen.append(g.clone()))   # stays with the old version
        y.mul_(3)
        (y * y).sum().backward()
        return y.retains_grad, y.grad, seen, x.grad
    both(s, device)


def test_retain_grad_with_hook(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 10)   # retained grad is taken after the hooks
        y.sum().backward()
        return y.grad, x.grad
    both(s, device)


# -- torch.autograd.grad ---------------------------------------------------------------------------
def test_autograd_grad(device):
    def s(T, dev):
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        y = x * w
        gx, gw = T.autograd.grad(y.exp().sum(), [x, w])
        return gx, gw, x.grad is None, w.grad is None
    both(s, device)


def test_autograd_grad_outputs_and_retain_graph(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x.sin() * x
        (g1,) = T.autograd.grad(y, x, grad_outputs=const(T, dev, G), retain_graph=True)
        (g2,) = T.autograd.grad([y], [x], grad_outputs=[const(T, dev, G) * 2])
        return g1, g2, error(lambda: T.autograd.grad(y, x, grad_outputs=const(T, dev, G)))
    both(s, device)


def test_autograd_grad_allow_unused(device):
    def s(T, dev):
        x, unused = leaf(T, dev, A), leaf(T, dev, V)
        y = (x * 2).sum()
        r = T.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
        e = error(lambda: T.autograd.grad(y, [x, unused], retain_graph=True))
        m = T.autograd.grad(y, [x, unused], materialize_grads=True)
        return r[0], r[1] is None, e, m
    both(s, device)


def test_autograd_grad_non_leaf_input(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        h = x * 2
        y = (h.exp()).sum()
        (gh,) = T.autograd.grad(y, h)
        h.sum().backward()   # h's own node did not run, so it still has its saved result
        return gh, x.grad
    both(s, device)


def test_autograd_grad_input_without_grad(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        return error(lambda: T.autograd.grad((x * 2).sum(), [const(T, dev, A)]))
    both(s, device)


# -- custom autograd.Function ------------------------------------------------------------------------
def _make_custom(T):
    class ScaledExp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k):
            y = (x * w).exp() * k
            ctx.save_for_backward(x, w, y)
            ctx.k = k
            return y

        @staticmethod
        def backward(ctx, g):
            x, w, y = ctx.saved_tensors
            ctx.seen_needs = ctx.needs_input_grad
            gy = g * y
            return (gy * w if ctx.needs_input_grad[0] else None,
                    (gy * x).sum(0) if ctx.needs_input_grad[1] else None, None)
    return ScaledExp


def test_custom_function(device):
    def s(T, dev):
        F = _make_custom(T)
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        y = F.apply(x, w, 2.0)
        name = y.grad_fn.name()
        (y * const(T, dev, G)).sum().backward()
        needs = y.grad_fn.ctx.seen_needs if T is tw else y.grad_fn.seen_needs
        c = const(T, dev, V)
        y2 = F.apply(x, c, 0.5)
        y2.sum().backward()
        needs2 = y2.grad_fn.ctx.seen_needs if T is tw else y2.grad_fn.seen_needs
        return name, x.grad, w.grad, needs, needs2, y.requires_grad, F.apply(const(T, dev, A), c, 1.0).requires_grad
    both(s, device)


def test_custom_function_saved_tensor_modified(device):
    def s(T, dev):
        F = _make_custom(T)
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        h = x * 1
        y = F.apply(h, w, 2.0)
        h.add_(1)
        return error(lambda: y.sum().backward())
    both(s, device)


def test_custom_function_mark_non_differentiable(device):
    def s(T, dev):
        class SortLike(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax(1)
                ctx.mark_non_differentiable(idx)
                return x * 2, idx

            @staticmethod
            def backward(ctx, g, gidx):
                return g * 2
        x = leaf(T, dev, A)
        y, i = SortLike.apply(x)
        y.sum().backward()
        return y.requires_grad, i.requires_grad, x.grad, i
    both(s, device)


# -- version counter and in-place errors ---------------------------------------------------------
VERSION_CASES = {
    "input-of-sin": lambda T, x: (lambda y: (y.sin(), y.add_(1))[0])(x * 1),
    "result-of-exp": lambda T, x: (lambda y: (y, y.mul_(2))[0])(x.exp()),
    "result-of-sigmoid-through-view": lambda T, x: (lambda y: (y, y[0].mul_(2))[0])(x.sigmoid()),
    "input-of-mul-by-setitem": lambda T, x: (lambda y: (y * x, y.__setitem__(0, 1.0))[0])(x * 1),
    "leaf-modified-under-no_grad": lambda T, x: (lambda y: (y, _no_grad_add(T, x))[0])(x.sin()),
    "input-of-pow-by-clamp_": lambda T, x: (lambda y: (y ** 2, y.clamp_(0, 1))[0])(x * 1),
    "self-mul_": lambda T, x: (lambda y: (y, y.mul_(y))[0])(x * 1),
    "result-of-tanh-via-copy_": lambda T, x: (lambda y: (y, y.copy_(x))[0])(x.tanh()),
}


def _no_grad_add(T, x):
    with T.no_grad():
        x.add_(1)


@pytest.mark.parametrize("name", list(VERSION_CASES))
def test_version_counter_error(device, name):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = VERSION_CASES[name](T, x)
        return error(lambda: y.sum().backward())
    got = both(s, device)
    assert got is not None and "modified by an inplace operation" in got[1]


def test_version_counter_values(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        y = x * 1
        v0 = y._version
        y.add_(1)
        y[0].mul_(2)
        v = y[1]
        v.zero_()
        with T.no_grad():
            x.mul_(1)
        return v0, y._version, v._version, x._version
    both(s, device)


def test_inplace_allowed_when_saved_value_untouched(device):
    def s(T, dev):
        x, w = leaf(T, dev, A), leaf(T, dev, V)
        y = x * w           # saves x and w, not y
        y.add_(1)
        y.mul_(3)
        z = y.exp()
        z.sum().backward()
        return x.grad, w.grad
    both(s, device)


def test_inplace_on_leaf_errors(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        return (error(lambda: x.add_(1)), error(lambda: x.mul_(2)), error(lambda: x[0].add_(1)),
                error(lambda: x.copy_(const(T, dev, A))), error(lambda: x.zero_()))
    both(s, device)


def test_inplace_on_leaf_under_no_grad_ok(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        with T.no_grad():
            x.mul_(2)
            x[0] = 1.0
        (x * x).sum().backward()
        return x, x.grad, x.is_leaf, x.requires_grad
    both(s, device)


def test_inplace_gives_history_to_constant(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        a = const(T, dev, B)
        v = a[1]
        a.mul_(x)
        (v * 2).sum().backward()
        return a.requires_grad, a.is_leaf, a.grad_fn.name(), v.requires_grad, v.grad_fn.name(), x.grad
    both(s, device)


# -- grad_fn names -------------------------------------------------------------------------------
NAMES = {
    "add": lambda T, x, y: x + y, "add_scalar": lambda T, x, y: x + 1, "add_alpha": lambda T, x, y: T.add(x, y, alpha=2),
    "sub": lambda T, x, y: x - y, "mul": lambda T, x, y: x * y, "mul_scalar": lambda T, x, y: x * 2,
    "div": lambda T, x, y: x / y, "pow_scalar": lambda T, x, y: x ** 2, "pow_tensor": lambda T, x, y: x ** y,
    "neg": lambda T, x, y: -x, "abs": lambda T, x, y: x.abs(), "exp": lambda T, x, y: x.exp(),
    "log": lambda T, x, y: x.log(), "log1p": lambda T, x, y: x.log1p(), "sqrt": lambda T, x, y: x.sqrt(),
    "rsqrt": lambda T, x, y: x.rsqrt(), "sigmoid": lambda T, x, y: x.sigmoid(), "tanh": lambda T, x, y: x.tanh(),
    "relu": lambda T, x, y: x.relu(), "gelu": lambda T, x, y: T.nn.functional.gelu(x),
    "gelu_tanh": lambda T, x, y: T.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda T, x, y: T.nn.functional.silu(x), "square": lambda T, x, y: x.square(),
    "clamp": lambda T, x, y: x.clamp(0, 1), "clamp_min": lambda T, x, y: x.clamp(min=0),
    "clamp_tensor": lambda T, x, y: x.clamp(y, y + 1), "maximum": lambda T, x, y: T.maximum(x, y),
    "where": lambda T, x, y: T.where(x > 0, x, y), "nan_to_num": lambda T, x, y: x.nan_to_num(),
    "remainder": lambda T, x, y: x % y, "remainder_scalar": lambda T, x, y: x % 2, "fmod": lambda T, x, y: x.fmod(y),
    "erf": lambda T, x, y: x.erf(), "exp2": lambda T, x, y: x.exp2(), "log2": lambda T, x, y: x.log2(),
    "view": lambda T, x, y: x.view(12), "reshape": lambda T, x, y: x.reshape(4, 3), "flatten": lambda T, x, y: x.flatten(),
    "permute": lambda T, x, y: x.permute(1, 0), "transpose": lambda T, x, y: x.transpose(0, 1), "t": lambda T, x, y: x.t(),
    "expand": lambda T, x, y: x[:1].expand(3, 4), "squeeze_dim": lambda T, x, y: x[:1].squeeze(0),
    "squeeze": lambda T, x, y: x[:1].squeeze(), "unsqueeze": lambda T, x, y: x.unsqueeze(0),
    "narrow": lambda T, x, y: x.narrow(0, 0, 1), "select": lambda T, x, y: x[0], "slice": lambda T, x, y: x[:, ::2],
    "alias": lambda T, x, y: x[...], "as_strided": lambda T, x, y: x.as_strided((2, 2), (1, 2)),
    "unbind": lambda T, x, y: x.unbind()[1], "split": lambda T, x, y: x.split(2)[0],
    "split_sizes": lambda T, x, y: x.split([1, 2])[0], "chunk": lambda T, x, y: x.chunk(2)[1],
    "sum": lambda T, x, y: x.sum(), "sum_dim": lambda T, x, y: x.sum(0), "mean": lambda T, x, y: x.mean(),
    "mean_dim": lambda T, x, y: x.mean(1), "prod": lambda T, x, y: x.prod(), "prod_dim": lambda T, x, y: x.prod(0),
    "max": lambda T, x, y: x.max(), "max_dim": lambda T, x, y: x.max(0)[0], "min_dim": lambda T, x, y: x.min(1).values,
    "amax": lambda T, x, y: x.amax(0), "amin": lambda T, x, y: x.amin(), "norm": lambda T, x, y: x.norm(),
    "mm": lambda T, x, y: x @ y.t(), "bmm": lambda T, x, y: T.bmm(x[None], y.t()[None]),
    "cat": lambda T, x, y: T.cat([x, y]), "stack": lambda T, x, y: T.stack([x, y]),
    "softmax": lambda T, x, y: x.softmax(0), "log_softmax": lambda T, x, y: x.log_softmax(1),
    "to": lambda T, x, y: x.to(T.float16), "clone": lambda T, x, y: x.clone(),
    "contiguous": lambda T, x, y: x.t().contiguous(),
    "mul_": lambda T, x, y: (x * 1).mul_(2), "exp_": lambda T, x, y: (x * 1).exp_(),
    "setitem": lambda T, x, y: _setitem(x * 1), "view_after_inplace": lambda T, x, y: _view_after_inplace(x * 1),
    "copy_": lambda T, x, y: (x * 1).copy_(y), "fill_": lambda T, x, y: (x * 1).fill_(2),
}


def _setitem(y):
    y[0] = 1.0
    return y


def _view_after_inplace(y):
    v = y[:, 1]
    v.mul_(2)
    return v


@pytest.mark.parametrize("name", list(NAMES))
def test_grad_fn_names(device, name):
    def s(T, dev):
        x, y = leaf(T, dev, A.abs() + 0.1), leaf(T, dev, B)
        return NAMES[name](T, x, y).grad_fn.name()
    both(s, device)


# -- memory: saved tensors don't outlive their graph ---------------------------------------------
def test_backward_frees_saved_tensors():
    x = tw.randn(64, 64, device="webgpu", requires_grad=True)
    before = tw.webgpu.memory_allocated()
    y = (x.exp() * x.sigmoid()).sum()       # saves a result, an input and intermediates
    during = tw.webgpu.memory_allocated()
    y.backward()
    after_backward = tw.webgpu.memory_allocated()
    grad_bytes = x.grad.numel() * 4
    del y
    probe = tw.zeros((), device="webgpu")          # what the 0-d loss itself takes
    loss_bytes = tw.webgpu.memory_allocated() - (before + grad_bytes)
    del probe
    assert during > before + loss_bytes
    # y alive after backward holds only its own value: the graph's saved tensors are gone
    assert after_backward == before + grad_bytes + loss_bytes
    assert tw.webgpu.memory_allocated() == before + grad_bytes
    x.grad = None
    assert tw.webgpu.memory_allocated() == before


def test_forward_without_backward_frees_on_del():
    x = tw.randn(64, 64, device="webgpu", requires_grad=True)
    before = tw.webgpu.memory_allocated()
    y = (x.exp() * x.tanh()).sum()
    del y   # no reference cycle through saved outputs: freed at once, without the gc
    assert tw.webgpu.memory_allocated() == before


def test_retain_graph_keeps_then_frees():
    x = tw.randn(64, 64, device="webgpu", requires_grad=True)
    before = tw.webgpu.memory_allocated()
    y = x.exp().sum()
    y.backward(retain_graph=True)
    kept = tw.webgpu.memory_allocated()
    assert kept >= before + 2 * x.numel() * 4   # grad + the saved exp result
    y.backward()
    del y
    x.grad = None
    assert tw.webgpu.memory_allocated() == before


def _train(T, dev, w0, data, target, memory=None):
    w = leaf(T, dev, w0)
    b = T.zeros(16, device=dev, requires_grad=True)
    data, target = const(T, dev, data), const(T, dev, target)
    for step in range(200):
        h = (data @ w + b).tanh()
        h2 = h * 1
        h2.mul_(0.5)                       # in-place in the graph
        loss = ((h2 - target) ** 2).mean()
        loss.backward()
        with T.no_grad():
            w -= 0.05 * w.grad
            b -= 0.05 * b.grad
        w.grad = None
        b.grad.zero_()
        if memory is not None and step in (10, 199):
            memory.append(tw.webgpu.memory_allocated())
    return loss, w, b


def test_training_loop_memory_flat():
    torch.manual_seed(1)
    w0, data, target = torch.randn(32, 16), torch.randn(8, 32), torch.randn(8, 16)
    memory = []
    got = _train(tw, "webgpu", w0, data, target, memory)
    assert memory[0] == memory[1], memory
    compare(got, _train(torch, "cpu", w0, data, target))


# -- bad input ------------------------------------------------------------------------------------
def test_non_scalar_backward_without_gradient(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        return error(lambda: (x * 2).backward())
    assert both(s, device) == ("RuntimeError", "grad can be implicitly created only for scalar outputs")


def test_backward_gradient_shape_mismatch(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        e = error(lambda: (x * 2).backward(const(T, dev, V)))
        return e[0], e[1].startswith("Mismatch in shape: grad_output[0] has a shape of")
    both(s, device)


def test_backward_on_tensor_without_grad(device):
    def s(T, dev):
        return error(lambda: (const(T, dev, A) * 2).sum().backward())
    both(s, device)


def test_backward_through_freed_graph_via_shared_node(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        h = x.exp()
        a = (h * 2).sum()
        b = (h * 3).sum()
        a.backward()              # frees h's node too
        return error(lambda: b.backward())
    both(s, device)


def test_grad_of_non_leaf_warns(device):
    for T in (torch, tw):
        x = leaf(T, device if T is tw else "cpu", A)
        y = x * 2
        with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
            assert y.grad is None
        y.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert y.grad is None and x.grad is None   # retained or leaf: no warning


def test_grad_assignment_checks(device):
    def s(T, dev):
        x = leaf(T, dev, A)
        return (error(lambda: setattr(x, "grad", const(T, dev, V))),
                error(lambda: setattr(x, "grad", 3)))
    both(s, device)


def test_requires_grad_on_integer_tensor(device):
    def s(T, dev):
        i = T.tensor([1, 2, 3], device=dev)
        return (error(lambda: i.requires_grad_()),
                error(lambda: setattr(i, "requires_grad", True)),
                error(lambda: T.ones(3, dtype=T.int64, device=dev, requires_grad=True)),
                error(lambda: T.tensor([1, 2], device=dev, requires_grad=True)),
                error(lambda: i.requires_grad_(False)))
    got = both(s, device)
    assert got[1] == ("RuntimeError", "only Tensors of floating point and complex dtype can require gradients")


def test_create_graph_gives_grad_a_graph(device):
    # (higher-order gradients in depth: tests/test_higher_order.py)
    def scenario(T, dev):
        x = leaf(T, dev, A)
        (x * x * x).sum().backward(create_graph=True)
        g = x.grad
        return g.requires_grad, g, T.autograd.grad(g.sum(), x)[0]
    both(scenario, device)
