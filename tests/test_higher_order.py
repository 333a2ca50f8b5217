"""Higher-order gradients (create_graph=True) compared with PyTorch: the second derivative of
each op family, a few third ones, and the programs that need them (a WGAN-GP gradient penalty,
Hessian-vector products, MAML's inner step, a PINN residual). Each scenario runs with torch
and with torchweb (T is the module) and what it returns must match."""

import math

import pytest
import torch

import torchweb as tw
import torchweb.nn.functional  # noqa: F401
from oracle import assert_close, ours


def values(shape, scale=1.0, shift=0.0):
    """Deterministic inputs from a formula (no random numbers)."""
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(0.7 * i + 0.3) + shift for i in range(n)]).reshape(shape)


def leaf(T, dev, t, requires_grad=True):
    if T is torch:
        return t.clone().requires_grad_(requires_grad)
    return ours(t, dev, requires_grad)


def compare(got, expected, where="result", rtol=1e-4, atol=1e-4):
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, tw.Tensor), f"{where}: {got!r} is not a tensor"
        assert_close(got, expected.detach(), rtol=rtol, atol=atol)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            compare(g, e, f"{where}[{i}]", rtol, atol)
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def both(scenario, device, rtol=1e-4, atol=1e-4):
    expected = scenario(torch, "cpu")
    got = scenario(tw, device)
    compare(got, expected, rtol=rtol, atol=atol)


def second_order(f, *inputs):
    """A scenario: the gradient of f's weighted sum with create_graph, then the gradient of
    the sum of the squared gradients (2 H g, every second derivative of f in play)."""
    def scenario(T, dev):
        xs = [leaf(T, dev, t) for t in inputs]
        y = f(T, *xs)
        w = leaf(T, dev, values(tuple(y.shape), 0.5, 1.0), False)
        gs = T.autograd.grad((y * w).sum(), xs, create_graph=True)
        s = sum((g * g).sum() for g in gs)
        hs = T.autograd.grad(s, xs, allow_unused=True, materialize_grads=True)
        return list(gs) + list(hs)
    return scenario


F = "nn.functional"


def fn(T):
    return T.nn.functional


OPS = {
    "arith": (lambda T, a, b: a * b / (b * b + 1) - a + 2 * b, [(3, 4), (3, 4)]),
    "broadcast": (lambda T, a, b: a * b + a / (b.abs() + 1), [(3, 4), (4,)]),
    "pow": (lambda T, a, b: (a.abs() + 0.5) ** 2.5 + a ** 3 + T.pow(a.abs() + 0.5, b), [(3, 4), (3, 4)]),
    "exp_log_sin_cos": (lambda T, a: a.exp() + (a.abs() + 1).log() + a.sin() * a.cos(), [(3, 4)]),
    "sqrt_rsqrt_recip": (lambda T, a: (a.abs() + 1).sqrt() + (a * a + 1).rsqrt() + (a * a + 2).reciprocal(), [(3, 4)]),
    "activations": (lambda T, a: fn(T).relu(a) * a + fn(T).gelu(a) + a.tanh() + a.sigmoid() + fn(T).silu(a)
                    + fn(T).softplus(a) + fn(T).gelu(a, approximate="tanh"), [(3, 4)]),
    "leaky_elu": (lambda T, a: fn(T).leaky_relu(a, 0.1) * a + fn(T).elu(a) + fn(T).logsigmoid(a), [(3, 4)]),
    "matmul": (lambda T, a, b: (a @ b).tanh(), [(3, 4), (4, 5)]),
    "linear": (lambda T, x, w, b: fn(T).linear(x, w, b).sigmoid(), [(3, 4), (5, 4), (5,)]),
    "bmm": (lambda T, a, b: T.bmm(a, b).sin(), [(2, 3, 4), (2, 4, 2)]),
    "reductions": (lambda T, a: (a * a).sum(1) + a.mean(0).sum() ** 2 + a.var(1) + a.std()
                   + T.logsumexp(a, 1) + a.norm() + a.amax(1) * a.max(1).values, [(3, 4)]),
    "prod": (lambda T, a: (a + 4).prod(1), [(3, 4)]),
    "softmax": (lambda T, a: fn(T).softmax(a, -1) * a + fn(T).log_softmax(a, 0), [(3, 4)]),
    "mse": (lambda T, a, b: fn(T).mse_loss(a.sin(), b).reshape(1), [(3, 4), (3, 4)]),
    "layer_norm": (lambda T, x, w, b: fn(T).layer_norm(x, (4,), w, b) ** 2, [(3, 4), (4,), (4,)]),
    "conv2d": (lambda T, x, w, b: fn(T).conv2d(x, w, b, padding=1).tanh(), [(2, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "conv2d_stride_groups": (lambda T, x, w: fn(T).conv2d(x, w, stride=2, groups=2) ** 2,
                             [(1, 4, 5, 5), (2, 2, 3, 3)]),
    "conv_transpose2d": (lambda T, x, w: fn(T).conv_transpose2d(x, w, stride=2) ** 2, [(1, 2, 3, 3), (2, 3, 3, 3)]),
    "views": (lambda T, a: (a.reshape(4, 3).t() * a).permute(1, 0).flatten().sin(), [(3, 4)]),
    "indexing": (lambda T, a: a[1:, ::2] ** 2 + a[0, 1:3] * a[:2, 0:1] + a[T.tensor([0, 2], device=a.device)][:, :2].exp(),
                 [(3, 4)]),
    "gather_index_select": (lambda T, a: a.gather(1, T.tensor([[0, 1], [2, 2], [3, 0]], device=a.device)) ** 3
                            + a.index_select(1, T.tensor([1, 3], device=a.device)).sin(), [(3, 4)]),
    "cat_stack": (lambda T, a, b: T.cat([a * b, a.exp()], 1).sum(1) + T.stack([a, b * b], 1).prod(1).sum(1),
                  [(3, 4), (3, 4)]),
    "pooling": (lambda T, x: fn(T).max_pool2d(x * x, 2) + fn(T).avg_pool2d(x.sin(), 2), [(1, 2, 4, 4)]),
    "pad_interpolate": (lambda T, x: fn(T).pad(x, (1, 2, 1, 1)).sin()[..., :4, :4] * fn(T).interpolate(x, scale_factor=2)[..., :4, :4].sin(),
                        [(1, 1, 2, 2)]),
    "cumsum_sort": (lambda T, a: a.cumsum(1) ** 2 + a.sort(1).values.sin(), [(3, 4)]),
    "where_clamp_abs_minmax": (lambda T, a, b: T.where(a > 0, a * b, b.exp()) + a.clamp(-0.5, 0.5) * b
                               + a.abs() * b + T.maximum(a, b) ** 2 + T.minimum(a * a, b), [(3, 4), (3, 4)]),
    "more_losses": (lambda T, a, b: (fn(T).l1_loss(a * b, b) + fn(T).smooth_l1_loss(a ** 3, b)
                                     + fn(T).huber_loss(a * 2, b, delta=0.5)
                                     + fn(T).kl_div(fn(T).log_softmax(a, 1), fn(T).softmax(b, 1), reduction="batchmean")
                                     + fn(T).binary_cross_entropy(a.sigmoid(), b.sigmoid())).reshape(1),
                    [(3, 4), (3, 4)]),
    "einsum_addmm_lerp": (lambda T, a, b, c: T.einsum("ij,kj->ik", a, b).tanh().sum(1)
                          + T.addmm(c[:3, :3], a, b.t()).sin().sum(1) + T.lerp(a, b[:3], 0.3).exp().sum(1),
                          [(3, 4), (3, 4), (4, 4)]),
    "shape_ops": (lambda T, a: a.repeat(2, 1).flip(0)[:3] * a.roll(1, 1) + a.tril().t().reshape(3, 4) ** 2
                  + T.cat(a.chunk(2, 1)[::-1], 1).sin() + a.expand(2, 3, 4).sum(0) * a.diagonal().sum(),
                  [(3, 4)]),
    "cumprod": (lambda T, a: (a + 2).cumprod(1) + (a * T.tensor([1.0, 0.0, 1.0, 1.0], device=a.device)).cumprod(1),
                [(3, 4)]),
    "max_unpool_median": (lambda T, x: fn(T).max_unpool2d(*fn(T).max_pool2d(x * x, 2, return_indices=True), 2).sin()
                          + x.median() * x, [(1, 2, 4, 4)]),
    "unfold_fold": (lambda T, x: fn(T).fold(fn(T).unfold(x, 2, padding=1).sin() * 2, (3, 3), 2, padding=1) ** 2,
                    [(1, 2, 3, 3)]),
    "hardtanh_dropout0": (lambda T, a: fn(T).hardtanh(a * 2) * a + fn(T).dropout(a.exp(), 0.0)
                          + fn(T).mish(a) + fn(T).hardswish(a) * a, [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_second_derivative(name, device):
    f, shapes = OPS[name]
    inputs = [values(s, 1.0, 0.1 * i) for i, s in enumerate(shapes)]
    both(second_order(f, *inputs), device)


def test_losses_second_derivative(device):
    def scenario(T, dev):
        x = leaf(T, dev, values((4, 5)))
        w = leaf(T, dev, values((5, 3), 0.5))
        t = T.tensor([0, 2, 1, 2], device=dev)
        logits = x @ w
        loss = fn(T).cross_entropy(logits, t) + fn(T).nll_loss(fn(T).log_softmax(logits * 2, 1), t)
        loss = loss + fn(T).binary_cross_entropy_with_logits(logits, logits.detach().sigmoid())
        gx, gw = T.autograd.grad(loss, (x, w), create_graph=True)
        return [gx, gw] + list(T.autograd.grad(gx.pow(2).sum() + gw.pow(2).sum(), (x, w)))
    both(scenario, device)


@pytest.mark.parametrize("op", ["exp", "sin", "tanh", "sigmoid", "pow"])
def test_third_derivative(op, device):
    def scenario(T, dev):
        x = leaf(T, dev, values((5,), 1.5))
        f = (lambda v: v ** 3.5 if op == "pow" else getattr(v, op)())
        y = f(x.abs() + 0.2 if op == "pow" else x)
        d1, = T.autograd.grad(y.sum(), x, create_graph=True)
        d2, = T.autograd.grad(d1.sum(), x, create_graph=True)
        d3, = T.autograd.grad(d2.sum(), x)
        return d1, d2, d3
    both(scenario, device)


def test_backward_create_graph_accumulates_with_graph(device):
    def scenario(T, dev):
        x = leaf(T, dev, values((3,), 1.0, 0.5))
        (x ** 3).sum().backward(create_graph=True)
        g1 = x.grad
        keeps = g1.grad_fn is not None
        (x.sin()).sum().backward(create_graph=True)   # .grad replaced by grad + new, graph kept
        g2 = x.grad
        h, = T.autograd.grad(g2.sum(), x)
        return keeps, g2.requires_grad, g1, g2, h
    both(scenario, device)


def test_saved_output_carries_its_graph(device):
    # exp's backward reads its saved result y: its second derivative needs y's graph
    def scenario(T, dev):
        x = leaf(T, dev, values((4,)))
        y = (x * 2).exp()
        g, = T.autograd.grad(y.sum(), x, create_graph=True)
        return g, T.autograd.grad(g.sum(), x)[0]
    both(scenario, device)


# -- programs ------------------------------------------------------------------------------------
def _mlp_critic(T, dev):
    w1 = leaf(T, dev, values((8, 4), 0.5))
    b1 = leaf(T, dev, values((8,), 0.1))
    w2 = leaf(T, dev, values((1, 8), 0.5, 0.05))
    b2 = leaf(T, dev, values((1,), 0.1))

    def critic(x):
        h = fn(T).leaky_relu(fn(T).linear(x, w1, b1), 0.2)
        return fn(T).linear(h, w2, b2)
    return critic, [w1, b1, w2, b2]


def _conv_critic(T, dev):
    w1 = leaf(T, dev, values((3, 1, 3, 3), 0.4))
    b1 = leaf(T, dev, values((3,), 0.1))
    w2 = leaf(T, dev, values((1, 12), 0.3))

    def critic(x):
        h = fn(T).leaky_relu(fn(T).conv2d(x, w1, b1, stride=2, padding=1), 0.2)
        return fn(T).linear(h.flatten(1), w2)
    return critic, [w1, b1, w2]


@pytest.mark.parametrize("kind", ["mlp", "conv"])
def test_wgan_gp_gradient_penalty(kind, device):
    def scenario(T, dev):
        critic, params = (_mlp_critic if kind == "mlp" else _conv_critic)(T, dev)
        shape = (5, 4) if kind == "mlp" else (5, 1, 4, 4)
        real = leaf(T, dev, values(shape, 1.0, 0.2), False)
        fake = leaf(T, dev, values(shape, 0.8, -0.1), False)
        alpha = leaf(T, dev, torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9]).reshape((5,) + (1,) * (len(shape) - 1)), False)
        interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        out = critic(interp)
        grads, = T.autograd.grad(out, interp, grad_outputs=T.ones_like(out), create_graph=True,
                                 retain_graph=True)
        gp = ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        loss.backward()
        return [gp, loss] + [p.grad for p in params]
    both(scenario, device)


def test_hessian_vector_product_by_double_grad(device):
    def scenario(T, dev):
        x = leaf(T, dev, values((4,), 1.0, 0.3))
        a = leaf(T, dev, values((4, 4), 0.5), False)
        v = leaf(T, dev, values((4,), 1.0, -0.2), False)
        f = (x @ a @ x).tanh() + (x ** 4).sum() + x.sin().prod()
        g, = T.autograd.grad(f, x, create_graph=True)
        hv, = T.autograd.grad(g, x, grad_outputs=v)
        return g, hv
    both(scenario, device)


def test_maml_inner_step(device):
    def scenario(T, dev):
        w = leaf(T, dev, values((3, 4), 0.5))
        b = leaf(T, dev, values((3,), 0.1))
        xs = leaf(T, dev, values((6, 4), 1.0), False)
        ys = T.tensor([0, 1, 2, 1, 0, 2], device=dev)
        xq = leaf(T, dev, values((5, 4), 0.8, 0.1), False)
        yq = T.tensor([2, 0, 1, 1, 0], device=dev)
        inner = fn(T).cross_entropy(fn(T).linear(fn(T).relu(xs) + xs.tanh(), w, b), ys)
        gw, gb = T.autograd.grad(inner, (w, b), create_graph=True)
        fw, fb = w - 0.4 * gw, b - 0.4 * gb      # fast weights, a function of (w, b)
        outer = fn(T).cross_entropy(fn(T).linear(xq.tanh(), fw, fb), yq)
        outer.backward()
        return outer, w.grad, b.grad
    both(scenario, device)


def test_pinn_residual(device):
    def scenario(T, dev):
        w1 = leaf(T, dev, values((8, 2), 0.8))
        b1 = leaf(T, dev, values((8,), 0.2))
        w2 = leaf(T, dev, values((1, 8), 0.5))
        pts = values((6, 2), 1.0)
        x = leaf(T, dev, pts[:, :1])
        t = leaf(T, dev, pts[:, 1:], True)
        u = fn(T).linear(T.tanh(fn(T).linear(T.cat([x, t], 1), w1, b1)), w2)
        ones = T.ones_like(u)
        u_x, u_t = T.autograd.grad(u, (x, t), grad_outputs=ones, create_graph=True)
        u_xx, = T.autograd.grad(u_x, x, grad_outputs=T.ones_like(u_x), create_graph=True)
        residual = u_t - 0.1 * u_xx + u * u_x          # Burgers' equation
        loss = (residual ** 2).mean()
        loss.backward()
        return u_xx, loss, w1.grad, b1.grad, w2.grad
    both(scenario, device)


def test_hvp_and_hessian_functional(device):
    def scenario(T, dev):
        def f(x):
            return (x.sin() * x).sum() + (x ** 3).prod()
        x = leaf(T, dev, values((3,), 0.9, 0.2), False)
        v = leaf(T, dev, values((3,), 1.0, 0.1), False)
        val, hv = T.autograd.functional.hvp(f, x, v)
        return val, hv, T.autograd.functional.hessian(f, x)
    both(scenario, device)


# -- refusals -------------------------------------------------------------------------------------
def test_op_without_double_backward_raises_naming_it(device):
    x = tw.tensor([[0.5, 1.0, 2.0]], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="double backward through Logcumsumexp"):
        tw.autograd.grad(tw.logcumsumexp(x * x, 1).sum(), x, create_graph=True)


def test_custom_function_backward_runs_under_grad_mode(device):
    def scenario(T, dev):
        class CubeFn(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x * x
        x = leaf(T, dev, values((3,), 1.0, 0.5))
        g, = T.autograd.grad(CubeFn.apply(x).sum(), x, create_graph=True)
        return g, T.autograd.grad(g.sum(), x)[0]
    both(scenario, device)


def test_scatter_masked_fill_index_add_second_derivative(device):
    def f(T, a, b):
        idx = T.tensor([[0, 1, 2, 0], [2, 2, 1, 0]], device=a.device)
        mask = T.tensor([[True, False, False, True]] * 3, device=a.device)
        s = T.zeros(3, 4, device=a.device).scatter_add(0, idx, b[:2] ** 2)
        s = s + a.scatter(0, idx, b[:2].sin())
        s = s + a.masked_fill(mask, 0.5).exp()
        s = s + a.index_add(1, T.tensor([3, 0], device=a.device), b[:, :2] * a[:, :2])
        return s
    both(second_order(f, values((3, 4)), values((3, 4), 0.7, 0.2)), device)


def test_embedding_second_derivative(device):
    def scenario(T, dev):
        w = leaf(T, dev, values((5, 3)))
        idx = T.tensor([[0, 2, 4], [2, 1, 0]], device=dev)
        out = []
        for padding in (None, 2):
            y = fn(T).embedding(idx, w, padding_idx=padding)
            g, = T.autograd.grad((y.sin() * y).sum(), w, create_graph=True)
            out += [g, T.autograd.grad((g * g).sum(), w)[0]]
        return out
    both(scenario, device)


def test_index_put_second_derivative(device):
    def f(T, a, b):
        rows = T.tensor([0, 2], device=a.device)
        put = a.index_put((rows,), b[:2] * b[:2])
        acc = a.index_put((rows,), b[1:] ** 3, accumulate=True)
        return put.sin() + acc * a
    both(second_order(f, values((3, 4)), values((3, 4), 0.7, 0.2)), device)


def test_normalization_layers_second_derivative(device):
    def f(T, x, w, b):
        F_ = fn(T)
        y = F_.batch_norm(x, None, None, w, b, training=True) + F_.group_norm(x, 1, w, b)
        return y + F_.instance_norm(x.sin(), weight=w, bias=b) + F_.normalize(x, dim=1)
    both(second_order(f, values((4, 3, 2)), values((3,), 0.5, 1.0), values((3,), 0.2)), device)


@pytest.mark.parametrize("masking", ["none", "causal", "bool"])
def test_attention_second_derivative(masking, device, monkeypatch):
    # webgpu: the fused kernels even at this size (their backward recorded from primitives)
    from torchweb.backends.webgpu import attention
    monkeypatch.setattr(attention, "COMPOSITE_MAX_SCORES", 0)
    def f(T, q, k, v):
        mask = T.tensor([[True, False, True], [True, True, False], [False, True, True], [True, True, True]],
                        device=q.device) if masking == "bool" else None
        return fn(T).scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=masking == "causal").sin()
    both(second_order(f, values((2, 4, 8)), values((2, 3, 8), 0.8, 0.1), values((2, 3, 8), 0.6, -0.2)), device)


def test_take_masked_select_index_fill_copy_second_derivative(device):
    def f(T, a, b):
        dev = a.device
        idx = T.tensor([0, 2], device=dev)
        y = a.index_fill(1, idx, 0.5) * b + a.index_copy(0, idx, b[1:] ** 2)
        y = y + T.take(a * b, T.tensor([[1, 5], [11, 0], [3, 3]], device=dev)).sum(1, keepdim=True)
        return y.sin() + (a.masked_select(b > 0.3) ** 3).sum()
    both(second_order(f, values((3, 4)), values((3, 4), 0.7, 0.2)), device)


def test_inplace_activations_and_module_hooks_under_create_graph(device):
    def scenario(T, dev):
        net = T.nn.Sequential(T.nn.Linear(4, 6), T.nn.LeakyReLU(0.2, inplace=True), T.nn.Linear(6, 6),
                              T.nn.ReLU(inplace=True), T.nn.Linear(6, 1))
        if T is tw:
            net = net.to(dev)
        with T.no_grad():
            for k, p in enumerate(net.parameters()):
                p.copy_(leaf(T, dev, values(tuple(p.shape), 0.5, 0.1 * k), False))
        seen = []
        net[4].register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape[-1]))
        x = leaf(T, dev, values((5, 4)))
        g, = T.autograd.grad(net(x).sum(), x, create_graph=True)
        # (the first bias reaches the penalty only through the activations' masks: PyTorch gives it
        # a zero gradient there, torchweb none; the critic term gives it one in both)
        (((g.norm(2, dim=1) - 1) ** 2).mean() + net(x * 0.5).mean()).backward()
        return [g, seen] + [p.grad for p in net.parameters()]
    both(scenario, device)


def test_writes_through_views_second_derivative(device):
    def f(T, a, b):
        h = a * 1.5
        h[:, 1] = b[:, 0] ** 2          # CopySlices
        h[1:, 2:] *= b[1:, :2].sin()    # in place through a view
        return h.exp()
    both(second_order(f, values((3, 4)), values((3, 4), 0.7, 0.2)), device)
