"""vmap's batching rules, class by class (elementwise, reductions, matmul, views, indexing, nn),
against torch.func.vmap on both devices: each scenario runs every op once on the whole batch
with batched and unbatched operands, negative in_dims / out_dims and nested levels; and the
fallback loop (an op without a rule) warns once, naming the op, and gives the right numbers."""

import warnings

import torch

import torchweb as tw
from test_func_transforms import values, const, both, error_of, same_error
from torchweb.func import _dispatch, _vmap


def no_fallback(fn):
    """fn() with the loop fallback counted: every op here has a rule."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    slow = [str(w.message) for w in caught if "performance drop" in str(w.message)]
    assert not slow, slow
    return out


def rules_scenario(scenario):
    def run(T, dev):
        return no_fallback(lambda: scenario(T, dev)) if T is tw else scenario(T, dev)
    return run


def test_elementwise_rules(device):
    def scenario(T, dev):
        v = T.vmap
        x, y = const(T, dev, values((3, 4, 2))), const(T, dev, values((4, 2, 3), 0.5, 0.1))
        row, big = const(T, dev, values((2,), 0.3)), const(T, dev, values((5, 4, 2), 0.7))
        mask = const(T, dev, values((3, 4, 2))) > 0
        return (v(lambda a, b: a * b + a.exp() - 2 ** b, in_dims=(0, -1))(x, y),
                v(lambda a: a + row)(x),                            # unbatched operand of lower rank
                v(lambda a: big * a[0])(x),                         # unbatched operand of higher rank
                v(lambda a, m: T.where(m, a, -a).clamp(-0.5, 0.5))(x, mask),
                v(lambda a, m: a.masked_fill(m, 0.0) >= 0.1)(x, mask),
                v(lambda a: T.nn.functional.gelu(a) + T.nn.functional.leaky_relu(a, 0.1))(x),
                v(lambda a: (a.clone().mul_(2).add_(row), a.float().to(T.float32)))(x),
                v(lambda a: T.zeros_like(a) + T.ones_like(a) * 2)(x))
    both(rules_scenario(scenario), device)


def test_in_place_rules(device):
    def scenario(T, dev):
        x = const(T, dev, values((3, 4)))
        T.vmap(lambda a: a.mul_(2).add_(1))(x)            # writes reach the caller's tensor
        views = T.vmap(lambda a: (a.clone().t_(), a.clone().unsqueeze_(0).squeeze_(), a.clone().tril_()))(
            const(T, dev, values((3, 4, 2))))
        buf = const(T, dev, values((4, 3)))
        T.vmap(lambda a, b: a.copy_(b), in_dims=(1, 0))(buf, const(T, dev, values((3, 4), 0.5)))
        return x, buf, views
    both(rules_scenario(scenario), device)
    for case in (lambda a, b: a.add_(b), lambda a, b: a.__setitem__(0, b[0])):    # writes into an unbatched tensor
        same_error(lambda T, dev: error_of(lambda: T.vmap(case, in_dims=(None, 0))(
            const(T, dev, values((4,))), const(T, dev, values((3, 4))))), device)


def test_reduction_rules(device):
    def scenario(T, dev):
        v = T.vmap
        x = const(T, dev, values((3, 4, 5)))
        m = v(lambda a: a.max(1))(x)
        return (v(lambda a: (a.sum(), a.sum(-1), a.sum((0, 1), keepdim=True), a.mean(0)))(x),
                (m.values, m.indices), v(lambda a: (a.max(), a.argmax(), a.argmin(1, keepdim=True)))(x),
                v(lambda a: (a.var(1), a.std(), a.norm(), a.logsumexp(-1), a.amax((0, 1))), in_dims=2)(x),
                v(lambda a: (a.cumsum(1), a.softmax(-1), T.nn.functional.log_softmax(a, 0)))(x),
                v(lambda a: tuple(a.sort(-1, descending=True)))(x), v(lambda a: a.topk(2).values)(x),
                v(lambda a: (a.prod(1), a.all(), (a > 0).any(0), a.sum(0, keepdim=True)), out_dims=-1)(x),
                v(lambda s: s.sum(0))(const(T, dev, values((4,)))))      # 0-d entries
    both(rules_scenario(scenario), device)


def test_matmul_rules(device):
    def scenario(T, dev):
        v = T.vmap
        a, b = const(T, dev, values((3, 4, 5))), const(T, dev, values((3, 5, 2), 0.5))
        vec, mat3 = const(T, dev, values((3, 5), 0.3)), const(T, dev, values((6, 2, 4), 0.2))
        w, bias = const(T, dev, values((3, 2, 5), 0.4)), const(T, dev, values((2,), 0.1))
        return (v(T.mm)(a, b), v(T.matmul, in_dims=(0, None))(a, b[0]), v(T.matmul, in_dims=(None, 0))(mat3, a),
                v(T.mv)(a, vec), v(T.dot)(vec, vec), v(lambda p: p @ vec[0])(a), v(lambda p: vec[0] @ b[0] @ p.t())(b),
                v(T.bmm, in_dims=(0, None))(const(T, dev, values((3, 2, 4, 5))), b[0].expand(2, 5, 2)),
                v(T.outer)(vec, vec), v(T.nn.functional.linear, in_dims=(0, 0, None))(a, w, bias),
                v(T.nn.functional.linear, in_dims=(0, None, None))(a, w[0], bias),
                v(lambda p, q: T.einsum("ij,jk->ik", p, q))(a, b), v(lambda p: T.einsum("ij,kj", p, a[0]))(a),
                v(lambda p, q: T.addmm(bias, p, q, beta=0.5, alpha=2))(a, b))
    both(rules_scenario(scenario), device)


def test_view_and_shape_rules(device):
    def scenario(T, dev):
        v = T.vmap
        x = const(T, dev, values((3, 4, 6)))
        small = const(T, dev, values((6,), 0.2))
        return (v(lambda a: (a.view(2, 12), a.reshape(-1), a.view(4, 2, 3).permute(2, 0, 1), a.t(), a.T))(x),
                v(lambda a: (a.transpose(0, 1), a.flatten(), a.unflatten(1, (2, 3)), a.unsqueeze(-1), a[None]))(x),
                v(lambda a: (a[:1].squeeze(0), a.unsqueeze(0).squeeze(), a.movedim(0, -1), a.expand(2, 4, 6)))(x),
                v(lambda a: (a.repeat(2, 1, 1), a.narrow(1, 2, 3), a.select(0, 1), a.chunk(2, -1), a.unbind(0)))(x),
                v(lambda a: (T.cat([a, small.expand(4, 6)], 0), T.stack([a, a], -1), a.flip(1), a.contiguous()))(x),
                v(v(lambda a: a.reshape(3, 2).sum(0)), in_dims=1, out_dims=-1)(x),
                v(lambda a: (a.view((2, 12)), a.reshape(shape=(24,)), a.view(2, 2, 6).permute((2, 0, 1)), a.expand(size=(2, 4, 6)),
                             a.view(-1, 3).repeat((1, 2))))(x))
    both(rules_scenario(scenario), device)


def test_indexing_rules(device):
    def scenario(T, dev):
        v = T.vmap
        x = const(T, dev, values((3, 5, 4)))
        idx = const(T, dev, torch.tensor([[0, 2, 1], [4, 4, 0], [1, 3, 2]]))
        table = const(T, dev, values((6, 3), 0.5))

        def setter(a, i):
            b = a.clone()
            b[1] = 0.0
            b[:, 2] = a[0, 1]
            return b
        return (v(lambda a: (a[1], a[:, 1:3], a[..., -1], a[1, ::2], a[None, 0]))(x),
                v(lambda a: a[idx[0]])(x), v(lambda a, i: a[i])(x, idx), v(lambda a, i: a[i, 1])(x, idx),
                v(lambda i: table[i])(idx), v(lambda a, i: a.gather(0, i[:, None].expand(3, 4)))(x, idx),
                v(lambda a: a.index_select(1, idx[0][:2]))(x), v(setter)(x, idx),
                v(lambda i: T.nn.functional.embedding(i, table))(idx),
                v(lambda a, i: T.zeros(5, 4, device=dev).scatter_add(0, i[:, None].expand(3, 4), a[:3]))(x, idx))
    both(rules_scenario(scenario), device)


def test_nn_rules(device):
    def scenario(T, dev):
        v, F = T.vmap, T.nn.functional
        imgs = const(T, dev, values((3, 2, 2, 6, 6)))
        w, b = const(T, dev, values((4, 2, 3, 3), 0.3)), const(T, dev, values((4,), 0.1))
        ws = const(T, dev, values((3, 4, 2, 3, 3), 0.2))
        logits, target = const(T, dev, values((3, 5, 4))), const(T, dev, torch.tensor([[1, 0, 3, 2, 1]] * 3))
        return (v(lambda x: F.conv2d(x, w, b, padding=1))(imgs),
                v(lambda x: F.conv2d(x[0], w, stride=2))(imgs),                    # unbatched-form entries
                v(lambda x, k: F.conv2d(x, k, b))(imgs, ws),                         # per-entry filters
                v(lambda k: F.conv2d(imgs[0], k, groups=1))(ws),
                v(lambda x: (F.max_pool2d(x, 2), F.avg_pool2d(x, 3, 1), F.adaptive_avg_pool2d(x, 1)))(imgs),
                v(lambda x: F.layer_norm(x, (6,)) + F.group_norm(x, 2))(imgs),
                v(lambda x, t: (F.cross_entropy(x, t), F.nll_loss(x.log_softmax(-1), t, reduction="sum"),
                                F.cross_entropy(x, t, reduction="none")))(logits, target),
                v(lambda x: F.cross_entropy(x, target[0], ignore_index=3))(logits),
                v(lambda x, t: (F.cross_entropy(x, t, weight=b.abs() + 0.5, ignore_index=1),
                                F.nll_loss(x[0], t[0], weight=b.abs() + 0.5)))(logits, target),
                v(lambda x: F.mse_loss(x, x.cos()) + F.l1_loss(x, x.sin(), reduction="sum") + F.kl_div(x, x.exp(), reduction="batchmean"))(logits),
                v(lambda x: F.pad(x, (1, 2)))(imgs),
                v(lambda x: F.conv_transpose2d(x, w.transpose(0, 1), stride=2))(imgs),
                v(lambda x: (F.batch_norm(x, b[:2], b[2:].abs() + 1, training=False), F.group_norm(x[:, :, 0], 1)))(imgs),
                v(lambda x, y: T.max(x, y) + T.minimum(x, y))(imgs, imgs.flip(0)))
    both(rules_scenario(scenario), device)


def test_fallback_warns_once_and_is_right(device):
    def scenario(T, dev):
        x = const(T, dev, values((3, 4)))
        return T.vmap(lambda a: T.kron(a[:2], a[2:]).sum(0))(x), T.vmap(lambda a: T.trace(a.view(2, 2)))(x)
    _dispatch._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both(scenario, device)
        scenario(tw, device)           # again: no second warning
    ours = [str(w.message) for w in caught if "performance drop" in str(w.message) and "kron" in str(w.message)]
    assert ours == ["There is a performance drop because we have not yet implemented the batching rule for kron. "
                    "Please file us an issue on GitHub so that we can prioritize its implementation."]


def test_nested_vmap_over_different_dims(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((2, 3, 4))), const(T, dev, values((4, 3), 0.5))
        inner = T.vmap(lambda a, b: (a * b).sum() + a.softmax(0)[0], in_dims=(-1, 0))
        return (T.vmap(inner, in_dims=(0, None))(x, y), T.vmap(T.vmap(lambda a: a @ a), in_dims=2)(x),
                T.vmap(lambda a: T.vmap(lambda b: b * a.sum())(a))(x))
    both(rules_scenario(scenario), device)


def test_grad_compositions(device):
    def scenario(T, dev):
        F = T.func
        w, xs = const(T, dev, values((4, 3), 0.5)), const(T, dev, values((6, 3)))

        def loss(w, x):
            return (w @ x).tanh().pow(2).sum()
        per_sample = T.vmap(F.grad(loss), in_dims=(None, 0))(w, xs)
        per_sample_value = T.vmap(F.grad_and_value(loss), in_dims=(None, 0))(w, xs)
        nested = T.vmap(T.vmap(F.grad(loss), in_dims=(None, 0)), in_dims=(0, None))(w[None].expand(2, 4, 3) * 1, xs)
        second = T.vmap(F.grad(F.grad(lambda x: x.sin().sum() * x.sum())))(xs[:, 0])
        jac = T.vmap(F.jacfwd(lambda x: x.sin() * x.sum()))(xs)
        return per_sample, per_sample_value, nested, second, jac
    both(rules_scenario(scenario), device)


def test_randomness_different_and_same_batch_once(device):
    x = const(tw, device, values((4, 3)))
    tw.manual_seed(0)
    diff = tw.vmap(lambda a: a * 0 + tw.randn(3, device=device), randomness="different")(x)
    assert len({tuple(r) for r in diff.tolist()}) == 4
    tw.manual_seed(0)
    like = tw.vmap(lambda a: tw.rand_like(a), randomness="different")(x)
    assert len({tuple(r) for r in like.tolist()}) == 4
    tw.manual_seed(0)
    same = tw.vmap(lambda a: tw.rand_like(a), randomness="same")(x)
    assert len({tuple(r) for r in same.tolist()}) == 1
    same_error(lambda T, dev: error_of(lambda: T.vmap(lambda a: T.rand_like(a))(const(T, dev, values((2, 3))))), device)
    # dropout off in eval: no draw, no error
    assert tw.vmap(lambda a: tw.nn.functional.dropout(a, 0.5, training=False))(x).tolist() == x.tolist()


def test_trailing_dim_and_creation_rules(device):
    def scenario(T, dev):
        v = T.vmap
        m = const(T, dev, values((3, 4, 4))) + 3 * const(T, dev, torch.eye(4))
        return (v(lambda a: (a.tril(), a.triu(1), T.det(a), T.inverse(a), a.new_zeros(2) + 1))(m),
                v(lambda a: (T.nn.functional.normalize(a, dim=0), T.diag_embed(a[0]), T.trace(a), T.diag(a, 1),
                             T.diag(a[0]), a.diagonal(), T.fliplr(a), T.rot90(a, 1, [0, 1]), T.msort(a),
                             T.amax(a), a.amin()))(m))
    both(rules_scenario(scenario), device)


def test_op_stored_before_vmap_runs_the_function_per_entry(device):
    # a module's activation=F.gelu is the op itself, not the name vmap routes: the whole
    # function then runs per entry, with a warning that says where the batched tensor went
    def scenario(T, dev):
        act = T.nn.functional.gelu
        return T.vmap(lambda a: act(a * 2).sum(0))(const(T, dev, values((3, 4, 2))))
    _vmap._warned_unrouted.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both(scenario, device)
    said = [str(w.message) for w in caught if "batched tensor reached" in str(w.message)]
    assert said and "runs once per batch entry instead" in said[0], [str(w.message) for w in caught]


def test_transforms_with_aux_inside_vmap(device):
    def scenario(T, dev):
        F = T.func
        xs, w = const(T, dev, values((4, 3))), const(T, dev, values((3,), 0.5))

        def f(w, x):
            y = (w * x).sin()
            return y.sum(), {"y": y, "n": x.norm()}
        g, aux = T.vmap(F.grad(f, has_aux=True), in_dims=(None, 0))(w, xs)
        gv, (v, aux2) = T.vmap(F.grad_and_value(f, has_aux=True), in_dims=(None, 0))(w, xs)
        jac, aux3 = T.vmap(F.jacrev(lambda x: (x.exp() * w, x.sum()), has_aux=True))(xs)
        vj = T.vmap(lambda x, c: F.vjp(lambda a: a.cos() * a.sum(), x)[1](c)[0])(xs, xs.flip(0))
        tangent = T.vmap(lambda x: F.jvp(lambda a: a.sin() * w, (x,), (T.ones_like(x),))[1])(xs)
        return g, aux, gv, v, aux2, jac, aux3, vj, tangent
    both(rules_scenario(scenario), device)


def test_linalg_and_special_rules(device):
    def scenario(T, dev):
        v, L, S = T.vmap, T.linalg, T.special
        m = const(T, dev, values((3, 4, 4))) + 3 * const(T, dev, torch.eye(4))
        spd = m @ m.transpose(-1, -2)
        return (v(lambda a: (L.det(a), L.inv(a), L.vector_norm(a), L.vector_norm(a, 1, dim=0), L.matrix_norm(a),
                             L.norm(a), L.norm(a, dim=1), L.diagonal(a), L.matmul(a, a)))(m),
                v(lambda a: (L.eigvalsh(a), L.cholesky(a), L.svdvals(a)))(spd),
                v(lambda a: (S.expit(a), S.logsumexp(a, 1), S.softmax(a, 0), S.xlogy(a.abs(), a.exp()),
                             S.ndtr(a), S.i0e(a)))(m))
    both(rules_scenario(scenario), device)


def test_attention_and_channel_rules(device):
    def scenario(T, dev):
        v, F = T.vmap, T.nn.functional
        q, k = const(T, dev, values((3, 2, 5, 4))), const(T, dev, values((3, 2, 6, 4), 0.5))
        val, mask = const(T, dev, values((2, 6, 4), 0.7)), const(T, dev, values((3, 5, 6))) > -0.5
        w = const(T, dev, values((5,), 0.3))
        return (v(lambda a, b: F.scaled_dot_product_attention(a, b, val))(q, k),
                v(lambda a, b, m: F.scaled_dot_product_attention(a, b, val, attn_mask=m))(q, k, mask),
                v(lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True))(q),
                v(lambda a: (F.prelu(a, w), F.prelu(a[0, 0], w[:1])))(q),
                v(lambda a, b: (F.cosine_similarity(a, b[:, :5]), F.cosine_similarity(a, b[:, :5], dim=-1)))(q, k),
                v(lambda a, b: F.pairwise_distance(a, b[:, :5]))(q, k))
    both(rules_scenario(scenario), device)


def test_nested_randomness_of_factories(device):
    # PyTorch's pattern: a 'different' level draws per entry, a 'same' one shares the draw
    def pattern(T, dev, outer, inner):
        x = const(T, dev, torch.zeros(2, 3))
        out = T.vmap(T.vmap(lambda a: a + T.rand((), device=dev), randomness=inner), randomness=outer)(x).tolist()
        return len({v for row in out for v in row}), len({tuple(row) for row in out}), len({tuple(c) for c in zip(*out)})
    for outer, inner in (("different", "different"), ("same", "different"), ("different", "same")):
        assert pattern(tw, device, outer, inner) == pattern(torch, "cpu", outer, inner)
    for mode, distinct in (("same", 1), ("different", 4)):     # chunks too
        out = tw.vmap(lambda a: a + tw.rand((), device=device), randomness=mode, chunk_size=2)(
            const(tw, device, torch.zeros(4)))
        assert len(set(out.tolist())) == distinct
