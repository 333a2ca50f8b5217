"""torch.func.vmap (torch.vmap) against PyTorch 2.13 on both devices: in_dims / out_dims as ints,
None and pytree prefixes, nested vmap, vmap over grad / jacrev, keyword arguments, in-place
writes, randomness='error' / 'different' / 'same', chunk_size, and PyTorch's errors. The
batching rules, class by class, are in tests/test_func_vmap_rules.py."""

import math

import pytest
import torch

import torchweb as tw
from oracle import assert_close
from test_func_transforms import values, const, compare, both, error_of, same_error


def test_in_dims_and_out_dims(device):
    def scenario(T, dev):
        v = T.vmap
        x, y = const(T, dev, values((3, 4))), const(T, dev, values((4, 3), 0.5))
        w = const(T, dev, values((4,), 0.2))
        return (v(T.sin)(x),
                v(T.mul, in_dims=(0, 1))(x, y),
                v(T.mul, in_dims=(1, 0))(x, y),
                v(T.add, in_dims=(0, None))(x, w),
                v(lambda a: a.sum(0), in_dims=-1)(x),
                v(lambda a: a.outer(a), out_dims=1)(x),
                v(lambda a: a.outer(a), out_dims=-1)(x),
                v(lambda a: (a, a.sum()), out_dims=(1, 0))(x),
                v(lambda a, b: a @ b, in_dims=(0, None))(x, y),
                v(T.dot)(x, y.t()),
                v(lambda a: w * 2)(x),                                   # does not use the input
                v(lambda a: (a.max(), w), out_dims=(0, None))(x))
    both(scenario, device)


def test_pytrees_kwargs_and_non_tensor_args(device):
    def scenario(T, dev):
        x, b = const(T, dev, values((3, 4))), const(T, dev, values((4,), 0.3))

        def f(d, scale, *, shift):
            return {"y": d["x"] * d["b"] * scale + shift, "parts": [d["x"].sum(), d["b"]]}
        out = T.vmap(f, in_dims=({"x": 0, "b": None}, None))({"x": x, "b": b}, 2.0, shift=1.0)
        pair = T.vmap(lambda p: p[0] * p[1], in_dims=((0, 1),))((x, x.t().contiguous()))
        return out["y"], out["parts"], pair
    both(scenario, device)


def test_nested_vmap_and_size_zero(device):
    def scenario(T, dev):
        x, y = const(T, dev, values((2, 3))), const(T, dev, values((4, 3), 0.5))
        outer = T.vmap(T.vmap(T.dot, in_dims=(None, 0)), in_dims=(0, None))(x, y)   # all pairs of dots
        triple = T.vmap(T.vmap(T.vmap(lambda a: a * a.exp())))(const(T, dev, values((2, 3, 2))))
        empty = T.vmap(T.sin)(const(T, dev, torch.zeros(0, 3)))
        return outer, triple, empty
    both(scenario, device)


def test_vmap_of_grad_and_jacrev(device):
    def scenario(T, dev):
        w = const(T, dev, values((3,), 0.6))
        xs, ys = const(T, dev, values((5, 3))), const(T, dev, values((5,), 0.8))

        def loss(w, x, y):
            return ((x * w).sum().tanh() - y) ** 2
        per_sample = T.vmap(T.func.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
        batched_jac = T.vmap(T.func.jacrev(lambda a: a.sin() * a.sum()))(xs)
        grad_of_vmap = T.func.grad(lambda w: T.vmap(loss, in_dims=(None, 0, 0))(w, xs, ys).sum())(w)
        return per_sample, batched_jac, grad_of_vmap
    both(scenario, device)


def test_backward_through_vmap_and_in_place_writes(device):
    def scenario(T, dev):
        x = const(T, dev, values((3, 4))).requires_grad_()
        out = T.vmap(lambda a: (a * a.softmax(0)).sum())(x)
        out.sum().backward()
        buf = const(T, dev, values((3, 4)))
        T.vmap(lambda a: a.mul_(2))(buf)            # writes reach the caller's tensor
        return out, x.grad, buf
    both(scenario, device)


def test_randomness(device):
    same_error(lambda T, dev: error_of(lambda: T.vmap(lambda a: a + T.rand(2, device=dev))(
        const(T, dev, values((3, 2))))), device)
    same_error(lambda T, dev: error_of(lambda: T.vmap(lambda a: T.nn.functional.dropout(a, 0.5))(
        const(T, dev, values((3, 2))))), device)
    same_error(lambda T, dev: error_of(lambda: T.vmap(T.sin, randomness="sometimes")), device)

    x = const(tw, device, values((4, 6)))
    tw.manual_seed(3)
    same = tw.vmap(lambda a: a * 0 + tw.rand(6, device=device), randomness="same")(x)
    after_same = tw.rand(2, device=device)
    tw.manual_seed(3)
    one = tw.rand(6, device=device)
    after_one = tw.rand(2, device=device)
    for i in range(4):     # every entry drew the numbers one unbatched call draws
        assert_close(same[i], torch.tensor(one.tolist()))
    assert_close(after_same, torch.tensor(after_one.tolist()))   # and the generator moved as far

    tw.manual_seed(3)
    diff = tw.vmap(lambda a: tw.nn.functional.dropout(a * 0 + 1, 0.5), randomness="different")(x)
    rows = [tuple(r) for r in diff.tolist()]
    assert len(set(rows)) > 1 and set(v for r in rows for v in r) <= {0.0, 2.0}
    # PyTorch's rule for 'same': one mask for the batch
    tw.manual_seed(3)
    masks = tw.vmap(lambda a: tw.nn.functional.dropout(a * 0 + 1, 0.5), randomness="same")(x)
    assert len({tuple(r) for r in masks.tolist()}) == 1


def test_chunk_size_and_functools_partial(device):
    import functools

    def scenario(T, dev):
        x = const(T, dev, values((5, 2)))
        return (T.vmap(lambda a: a.exp(), chunk_size=2)(x),
                T.func.vmap(functools.partial(T.mul, other=3.0))(x),
                error_of(lambda: T.vmap(T.sin, chunk_size=0)),
                error_of(lambda: T.vmap(functools.partial(T.mul, other=3.0), in_dims=(0, 0))(x, x)))
    both(scenario, device)


@pytest.mark.parametrize("case", range(13))
def test_errors(device, case):
    def scenario(T, dev):
        x, y, v = const(T, dev, values((3, 4))), const(T, dev, values((4, 4))), T.vmap
        return error_of([
            lambda: v(T.add)(x, y),                                  # sizes 3 and 4
            lambda: v(T.sin, in_dims=5)(x),                          # dim out of range
            lambda: v(T.sin, in_dims=(0, 0))(x),                     # in_dims longer than the inputs
            lambda: v(T.sin, in_dims=[0])(x),                        # a list
            lambda: v(T.sin, in_dims=None)(x),
            lambda: v(lambda a, b: a, in_dims=(0, 0))(x, 3),         # a number cannot be mapped
            lambda: v(lambda a: 3)(x),                               # a number returned
            lambda: v(lambda a: a, out_dims=3)(x),
            lambda: v(lambda a: a, out_dims=(0, 0))(x),
            lambda: v(lambda a: a, out_dims=None)(x),                # a batched result, out_dim None
            lambda: v(T.sin)(),
            lambda: v(T.sin, in_dims=(None,))(x),
            lambda: v(T.sin)(const(T, dev, torch.tensor(1.0))),
        ][case])
    same_error(scenario, device)


def test_jacobian_of_batched_inputs_matches_autograd_functional(device):
    # vmap(jacrev(f)) against autograd.functional.jacobian entry by entry
    x = const(tw, device, values((3, 4)))
    got = tw.vmap(tw.func.jacrev(lambda a: a.tanh() * a.norm()))(x)
    for i in range(3):
        expected = torch.autograd.functional.jacobian(lambda a: a.tanh() * a.norm(), values((3, 4))[i])
        assert_close(got[i], expected, rtol=1e-4, atol=1e-5)
    assert math.isclose(float(got.sum()), float(sum(
        torch.autograd.functional.jacobian(lambda a: a.tanh() * a.norm(), values((3, 4))[i]).sum()
        for i in range(3))), rel_tol=1e-4)


def test_data_dependent_control_flow_and_item_raise_pytorchs_errors(device):
    def scenario(T, dev):
        x = const(T, dev, values((4, 3)))
        return (error_of(lambda: T.vmap(lambda a: a * 2 if a.sum() > 0 else -a)(x)),
                error_of(lambda: T.vmap(lambda a: a * a.sum().item())(x)))
    same_error(lambda T, dev: scenario(T, dev)[0], device)
    same_error(lambda T, dev: scenario(T, dev)[1], device)


def test_torch_vmap_is_func_vmap():
    compare(tw.vmap(tw.sin)(tw.ones(2, 2, device="cpu")), torch.vmap(torch.sin)(torch.ones(2, 2)))
