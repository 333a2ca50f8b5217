"""Bad input gives PyTorch's exception type (and, where users read it, PyTorch's message), and
leaves the device working: after each error the next op still gives PyTorch's answer."""

import re

import pytest
import torch

import torchweb
from oracle import assert_close, make, ours


def still_works(device):
    """An op after the error still runs, and runs right (a recorded-but-broken command stream or
    a poisoned buffer pool would show here)."""
    a, b = make((5, 7)), make((7, 3))
    x, y = ours(a, device), ours(b, device)
    assert_close((x @ y).relu() + x.sum(1, keepdim=True), (a @ b).relu() + a.sum(1, keepdim=True), atol=1e-4)
    assert_close(x[1:, ::2].exp().max(0).values, a[1:, ::2].exp().max(0).values)


def same_error(fn, *tensors, device, match_message=True):
    """fn(module, *tensors) raises in torch and in torchweb alike: type and (optionally) message."""
    with pytest.raises(Exception) as theirs:
        fn(torch, *tensors)
    with pytest.raises(type(theirs.value)) as mine:
        fn(torchweb, *[ours(t, device) for t in tensors])
    if match_message:
        assert str(mine.value) == str(theirs.value)
    still_works(device)
    return mine.value


BROADCAST = [((2, 3), (4,)), ((2, 3), (3, 2)), ((5, 1, 4), (2, 3, 1)), ((0,), (2,)), ((2, 1, 3, 1, 5), (2, 4, 6))]


@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
@pytest.mark.parametrize("op", ["add", "mul", "lt", "maximum", "where_other"])
def test_broadcast_mismatch(device, shapes, op):
    a, b = make(shapes[0]), make(shapes[1])
    fn = {"add": lambda m, x, y: x + y, "mul": lambda m, x, y: m.mul(x, y), "lt": lambda m, x, y: x < y,
          "maximum": lambda m, x, y: m.maximum(x, y),
          "where_other": lambda m, x, y: m.where(x > 0, x, y)}[op]
    err = same_error(fn, a, b, device=device)
    assert re.search(r"size of tensor a \(\d+\) must match the size of tensor b \(\d+\)", str(err))


def test_broadcast_mismatch_inplace(device):
    same_error(lambda m, x, y: x.add_(y), make((2, 3)), make((4, 3)), device=device)
    same_error(lambda m, x, y: x.mul_(y), make((3,)), make((2, 3)), device=device)
    same_error(lambda m, x, y: x.copy_(y), make((2, 3)), make((2, 4)), device=device, match_message=False)
    same_error(lambda m, x, y: x.add_(y), make((2, 3)), make((2, 1, 3)), device=device)


@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((1, 7), (6, 1)), ((2, 0), (1, 2))], ids=str)
def test_matmul_shape_mismatch(device, shapes):
    a, b = make(shapes[0]), make(shapes[1])
    err = same_error(lambda m, x, y: m.mm(x, y), a, b, device=device)
    sa, sb = "x".join(map(str, shapes[0])), "x".join(map(str, shapes[1]))
    assert str(err) == f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})"
    same_error(lambda m, x, y: x @ y, a, b, device=device)
    same_error(lambda m, x, y: m.matmul(x, y), a, b, device=device)


def test_matmul_message_exact(device):
    x, y = torchweb.zeros(2, 3, device=device), torchweb.zeros(4, 5, device=device)
    with pytest.raises(RuntimeError, match=re.escape("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")):
        x @ y
    still_works(device)


def test_other_matmul_errors(device):
    same_error(lambda m, x, y: m.bmm(x, y), make((2, 3, 4)), make((3, 4, 5)), device=device)
    same_error(lambda m, x, y: m.bmm(x, y), make((2, 3, 4)), make((2, 5, 5)), device=device)
    same_error(lambda m, x, y: m.mm(x, y), make((3,)), make((3, 2)), device=device)
    same_error(lambda m, x, y: m.matmul(x, y), make(()), make((3,)), device=device)
    same_error(lambda m, x, y: m.matmul(x, y), make((3,)), make((4,)), device=device)
    same_error(lambda m, x, y: m.dot(x, y), make((3, 1)), make((3,)), device=device)


def test_mixed_devices():
    x = torchweb.ones(3, device="webgpu")
    y = torchweb.ones(3, device="cpu")
    for fn in (lambda: x + y, lambda: y * x, lambda: torchweb.where(x > 0, x, y), lambda: x.add_(y),
               lambda: torchweb.cat([x, y]), lambda: x.reshape(3, 1) @ y.reshape(1, 3), lambda: torchweb.maximum(y, x),
               lambda: torchweb.stack([y, x]), lambda: torchweb.mm(y.reshape(1, 3), x.reshape(3, 1))):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device") as e:
            fn()
        assert "cpu" in str(e.value) and "webgpu" in str(e.value)
        still_works("webgpu")
        still_works("cpu")
    # copy_ between devices is allowed, as PyTorch's is
    z = torchweb.zeros(3, device="webgpu")
    z.copy_(torchweb.tensor([1.0, 2.0, 3.0], device="cpu"))
    assert_close(z, torch.tensor([1.0, 2.0, 3.0]))


UNSUPPORTED = {   # (float64 is held on the host: tests/test_float64_host.py)
    "complex128": lambda d: torchweb.ones(2, dtype=torchweb.complex128, device=d),
    "int8": lambda d: torchweb.ones(2, dtype=torchweb.int8, device=d),
    "int16": lambda d: torchweb.arange(3, dtype=torchweb.int16, device=d),
    "string": lambda d: torchweb.ones(2, dtype="int16", device=d),
    "not_a_dtype": lambda d: torchweb.ones(2, dtype=5, device=d),
}


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_dtype_type_error(device, name):
    with pytest.raises(TypeError) as e:
        UNSUPPORTED[name](device)
    if name not in ("not_a_dtype", "string"):   # (a name is refused as PyTorch does: not a dtype)
        assert "not supported" in str(e.value) and "torchweb" in str(e.value)
    still_works(device)


INDEX = [(lambda x: x[5]), (lambda x: x[-6]), (lambda x: x[0, 4]), (lambda x: x[:, -5]), (lambda x: x[0, 0, 0]),
         (lambda x: x.select(1, 4)), (lambda x: x.select(0, -6)), (lambda x: x.sum(2)), (lambda x: x.max(-3)),
         (lambda x: x.transpose(0, 5)), (lambda x: x.unsqueeze(4)), (lambda x: x.narrow(0, 6, 1)),
         (lambda x: x.softmax(2)), (lambda x: x.argmax(3)), (lambda x: x.flatten(0, 3))]


@pytest.mark.parametrize("i", range(len(INDEX)))
def test_index_out_of_range(device, i):
    err = same_error(lambda m, x: INDEX[i](x), make((5, 4)), device=device, match_message=False)
    assert isinstance(err, IndexError)


def test_setitem_out_of_range(device):
    def run(m, x):
        x[7] = 1.0
    same_error(run, make((5, 4)), device=device)


OTHER = {
    "view_bad_size": (lambda m, x: x.view(7), (2, 3)),
    "reshape_two_minus1": (lambda m, x: x.reshape(-1, -1), (2, 3)),
    "expand_bad": (lambda m, x: x.expand(4, 3), (2, 3)),
    "cat_mismatch": (lambda m, x: m.cat([x, x.t()], 0), (2, 3)),
    "cat_empty_list": (lambda m, x: m.cat([]), (2,)),
    "stack_mismatch": (lambda m, x: m.stack([x, x[:1]]), (2, 3)),
    "inplace_int_float": (lambda m, x: x.long().add_(1.5), (2, 3)),
    "inplace_bool_result": (lambda m, x: (x > 0).mul_(2.5), (2, 3)),
    "sub_bool": (lambda m, x: (x > 0) - (x > 1), (2, 3)),
    "neg_bool": (lambda m, x: -(x > 0), (2, 3)),
    "bitwise_float": (lambda m, x: x & x, (2, 3)),
    "mean_int": (lambda m, x: x.long().mean(), (2, 3)),
    "where_not_bool": (lambda m, x: m.where(x.long(), x, x), (2, 3)),
    "item_many": (lambda m, x: x.item(), (2, 3)),
    "bool_many": (lambda m, x: bool(x), (2, 3)),
    "clamp_none": (lambda m, x: x.clamp(), (2, 3)),
    "int_neg_pow": (lambda m, x: x.long() ** -1, (2, 3)),
    "negative_size": (lambda m, x: m.zeros(2, -1), ()),
    "div_bad_mode": (lambda m, x: m.div(x, x, rounding_mode="round"), (2, 3)),
    "full_uint8_overflow": (lambda m, x: m.full((2,), 300, dtype=m.uint8), ()),
    "fill_int32_overflow": (lambda m, x: x.int().fill_(2**40), (2,)),
    "alpha_float_int": (lambda m, x: m.add(x.long(), x.long(), alpha=0.5), (2,)),
    "max_empty": (lambda m, x: x[:0].max(), (2,)),
    "var_int": (lambda m, x: x.long().var(), (3,)),
    "permute_dup": (lambda m, x: x.permute(0, 0), (2, 3)),
    "split_bad_sizes": (lambda m, x: x.split([1, 1]), (3,)),
    "gelu_int": (lambda m, x: m.nn.functional.gelu(x.long()), (3,)),
    "softmax_int": (lambda m, x: m.softmax(x.long(), 0), (3,)),
    "argmax_bool": (lambda m, x: (x > 0).argmax(), (3,)),
    "requires_grad_int": (lambda m, x: x.long().requires_grad_(), (3,)),
    "leaf_inplace": (lambda m, x: x.clone().requires_grad_().add_(1), (3,)),
}


@pytest.mark.parametrize("name", OTHER)
def test_other_errors(device, name):
    fn, shape = OTHER[name]
    same_error(fn, make(shape), device=device, match_message=False)


@pytest.mark.parametrize("name", ["sub_bool", "neg_bool", "mean_int", "where_not_bool", "clamp_none",
                                  "int_neg_pow", "full_uint8_overflow", "alpha_float_int", "max_empty",
                                  "argmax_bool", "inplace_int_float", "leaf_inplace", "requires_grad_int",
                                  "expand_bad", "stack_mismatch", "split_bad_sizes"])
def test_error_messages_match_pytorch(device, name):
    fn, shape = OTHER[name]
    same_error(fn, make(shape), device=device, match_message=True)


def test_many_errors_in_a_row_leave_runtime_clean(device):
    x = ours(make((4, 4)), device)
    for _ in range(20):
        for bad in (lambda: x @ torchweb.ones(5, 5, device=device), lambda: x + torchweb.ones(3, device=device),
                    lambda: x[9], lambda: x.view(3)):
            with pytest.raises((RuntimeError, IndexError)):
                bad()
    still_works(device)
