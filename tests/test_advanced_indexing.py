"""Tensor indexing (ops/indexing.py) against PyTorch on both devices: x[index] and
x[index] = value with int tensors, lists, bool masks, mixed with ints, slices, None and
Ellipsis (where the advanced dims go), index_put(_), gradients through both, and PyTorch's
errors (an index in a GPU tensor is checked by the kernel and raises at the next readback)."""

import warnings

import pytest
import torch

import torchweb
from oracle import check, make, ours
from test_autograd_ops import NoGrad, run_case

warnings.filterwarnings("ignore", message=".*non-tuple sequence.*")
warnings.filterwarnings("ignore", message=".*uint8.*")

T = torch.tensor
GET = {
    "list": ([0, 1, 1],),
    "neg_list": ([-1, 0],),
    "tensor": (T([[1, 0], [0, 1]]),),
    "int32": (T([1, 0], dtype=torch.int32),),
    "int_then_separated": (slice(None), 0, slice(None), [0, 1]),
    "separated": ([0, 1], slice(None), [0, 1]),
    "adjacent": (slice(None), [0, 1], [0, 1]),
    "adjacent_none_between": (slice(None), [0, 1], None, [0, 1]),
    "ellipsis": (Ellipsis, [0, 1], [0, 1]),
    "tensor_int": (slice(None), [0, 1], 2),
    "int_first": (1, [0, 1], slice(None), [2, 3]),
    "broadcast": (T([[0], [1]]), T([0, 1, 2])),
    "none_first": (None, [0, 1]),
    "slice_between": ([0], slice(1, None), [1]),
    "mask_lead": (T([True, False]),),
    "mask_2d": (T([[True, False, True], [False, False, True]]),),
    "mask_mid": (slice(None), T([True, False, True])),
    "mask_and_index": (T([True, True]), [0, 2]),
    "mask_uint8": (T([1, 0], dtype=torch.uint8),),
    "mask_all_false": (T([False, False]),),
    "nested_list_as_tuple": [[0, 1], [1, 0]],
    "empty_list": ([],),
    "0d_tensor": (T(1),),
    "0d_bool": (T(True),),
    "bool_list": ([True, False],),
    "step_slice_then_index": (slice(None, None, 2), [2, 0], slice(1, 4, 2)),
}


def _index(spec, device):
    def conv(v):
        return ours(v, device) if isinstance(v, torch.Tensor) else v
    if isinstance(spec, list):
        return [conv(v) for v in spec]
    return tuple(conv(v) for v in spec) if len(spec) > 1 else conv(spec[0])


def _torch_index(spec):
    if isinstance(spec, list):
        return spec
    return spec if len(spec) > 1 else spec[0]


@pytest.mark.parametrize("name", GET)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_getitem(device, name, layout):
    x = make((2, 3, 4, 5))
    spec = GET[name]
    check(lambda m, a: a[_index(spec, device) if m is torchweb else _torch_index(spec)], x, device=device, layout=layout)


def test_getitem_range_and_numpy(device):
    """logprobs[range(n), Y] (makemore, nanoGPT-style losses) and numpy index arrays."""
    import numpy as np
    x = make((4, 5))
    y = torch.tensor([0, 4, 2, 2])
    check(lambda m, a, t: -a.log_softmax(1)[range(4), t].mean(), x, y, device=device)
    check(lambda m, a: a[np.array([3, 0, 3])], x, device=device)
    check(lambda m, a: a[:, np.array([True, False, True, False, True])], x, device=device)


def test_getitem_mask_of_values(device):
    x = make((3, 4), special=True)
    check(lambda m, a: a[a > 0], x, device=device)
    check(lambda m, a: a[~m.isnan(a)], x, device=device)
    check(lambda m, a: a[:, a[0] > 0], x, device=device)


def test_getitem_big_grid(device):
    """One gather past 65535 workgroups."""
    n = (1 << 24) + 7
    x = torchweb.arange(n, device=device)
    i = torchweb.arange(n - 1, -1, -1, device=device)
    got = x[i]
    assert got[:3].tolist() == [n - 1, n - 2, n - 3] and got[-2:].tolist() == [1, 0]


@pytest.mark.parametrize("bad", ["oob", "oob_neg", "float", "mask_shape", "bcast", "too_many"])
def test_getitem_errors(device, bad):
    x = make((2, 3))
    spec = {"oob": ([2],), "oob_neg": (T([-3]),), "float": (T([1.0]),), "mask_shape": (T([True, False, True]),),
            "bcast": (T([0, 1]), T([0, 1, 2])), "too_many": (0, 0, [0])}[bad]

    def fn(m, a):
        r = a[_index(spec, device) if m is torchweb else _torch_index(spec)]
        r.tolist()
        return r
    check(fn, x, device=device)


SET = {
    "list_number": (([0, 2],), 1.5),
    "list_row": (([0, 2],), T([1.0, 2, 3, 4])),
    "mask_values": ((T([[True, False, False, True]] * 3),), T([1.0, 2, 3, 4, 5, 6])),
    "mask_number": ((T([[True, False, True, False]] * 3),), 5.0),
    "mask_0d_tensor": ((T([True, False, True]),), T(-2.0)),
    "mask_rows": ((T([True, False, True]),), T([1.0, 2, 3, 4])),
    "leading_ones": (([0, 1],), torch.ones(1, 2, 4)),
    "slice_then_list": ((slice(None), [1, 3]), T([[7.0], [8.0], [9.0]])),
    "slice_then_mask": ((slice(None), T([True, False, True, False])), 3.0),
    "int_then_list": ((1, [0, 3]), T(4.0)),
    "int_number": (([1],), 7),
    "separated": (([0, 2], slice(None), [1, 3]), T([5.0, 6.0])),
}


@pytest.mark.parametrize("name", SET)
def test_setitem(device, name):
    spec, value = SET[name]

    def fn(m, a, *v):
        b = a.clone()
        idx = _index(spec, device) if m is torchweb else _torch_index(spec)
        b[idx if not isinstance(spec, tuple) or len(spec) > 1 else idx] = v[0] if v else value
        return b
    if isinstance(value, torch.Tensor):
        check(fn, make((3, 4)) if name != "separated" else make((3, 2, 4)), value, device=device)
    else:
        check(fn, make((3, 4)), device=device)


def test_setitem_into_views_and_dtypes(device):
    check(lambda m, a, i: a.t().__setitem__(i, 0.0) or a, make((4, 3)), T([0, 2]), device=device)
    check(lambda m, a, i: a.__setitem__((slice(None), i), True) or a, make((3, 4), torch.bool), T([3, 0]), device=device)
    check(lambda m, a, i: a.__setitem__(i, -7) or a, make((5,), torch.int64), T([4, 0, 0]), device=device)


@pytest.mark.parametrize("bad", ["dtype", "shape", "oob"])
def test_setitem_errors(device, bad):
    value = {"dtype": T([1, 2, 3, 4]), "shape": T([1.0, 2.0, 3.0]), "oob": T([1.0, 2, 3, 4])}[bad]
    i = T([0, 3]) if bad == "oob" else T([0, 2])

    def fn(m, a, i, v):
        b = a.clone()
        b[i] = v
        b.tolist()
        return b
    check(fn, make((3, 4)), i, value, device=device)


def test_index_put(device):
    x = make((3, 4))
    check(lambda m, a, i, v: a.clone().index_put_((i,), v, accumulate=True), x, T([0, 0, 2]), make((4,)), device=device)
    check(lambda m, a, i, v: m.index_put(a, (i,), v), x, T([0, 2]), make((4,)), device=device)
    check(lambda m, a, i, j, v: a.index_put((i, j), v, accumulate=True), x, T([0, 0, 2]), T([1, 1, 3]), make(()), device=device)
    check(lambda m, a, k, v: a.clone().index_put_((k,), v, accumulate=True), x, T([True, False, True]), T(2.0), device=device)
    check(lambda m, a, i, v: a.clone().index_put_([i], v), make((4,), torch.int64), T([0, 3]), T([5, 6]), device=device)
    check(lambda m, a, i, v: a.clone().index_put_((i,), v), x, T([0]), T([1, 2, 3, 4]), device=device)


def test_index_put_int64_accumulate_past_int32(device):
    x, i, v = torch.zeros(3, dtype=torch.long), T([0, 0]), T([2**31 - 1, 5])
    if device == "webgpu":
        with pytest.raises(torchweb.webgpu.Int64RangeError):
            ours(x, device).index_put_((ours(i, device),), ours(v, device), accumulate=True).tolist()
    else:
        check(lambda m, a, i, v: a.index_put_((i,), v, accumulate=True), x, i, v, device=device)


I = NoGrad  # noqa: E741
GRADS = {
    "list": (lambda m, x: x[[0, 0, 2]], lambda: [torch.randn(3, 4)]),
    "separated": (lambda m, x, i: x[i, :, i], lambda: [torch.randn(3, 2, 3), I(T([2, 0, 2]))]),
    "slice_list": (lambda m, x: x[:, [0, 2]], lambda: [torch.randn(3, 4)]),
    "mask": (lambda m, x: x[x > 0], lambda: [torch.randn(3, 4)]),
    "index_put": (lambda m, x, i, v: x.index_put((i,), v), lambda: [torch.randn(3, 4), I(T([0, 2])), torch.randn(4)]),
    "index_put_acc": (lambda m, x, i, v: m.index_put(x, (i,), v, accumulate=True), lambda: [torch.randn(3, 4), I(T([0, 0])), torch.randn(2, 4)]),
    "setitem": (lambda m, x, v: _set(x * 1, [0, 0], v), lambda: [torch.randn(3, 4), torch.randn(4)]),
    "setitem_mask_vec": (lambda m, x, v: _set(x * 1, x > 0, v[:int((x > 0).sum())]), lambda: [T([[1.0, -1], [2, 3]]), torch.randn(5)]),
    "setitem_mask_scalar": (lambda m, x, v: _set(x * 1, x > 0, v), lambda: [torch.randn(3, 4), torch.randn(())]),
    "setitem_view": (lambda m, x, v: _set_view(x * 1, v), lambda: [torch.randn(3, 4), torch.randn(2)]),
}


def _set(y, i, v):
    y[i] = v
    return y


def _set_view(y, v):
    y[1][[0, 3]] = v
    return y


@pytest.mark.parametrize("name", GRADS)
def test_gradients(device, name):
    fn, inputs = GRADS[name]
    run_case(device, fn, inputs)


def test_node_names(device):
    x = torchweb.randn(3, 4, device=device, requires_grad=True)
    assert x[[0, 1]].grad_fn.name() == "IndexBackward0"
    assert x.index_put((torchweb.tensor([0], device=device),), x[0]).grad_fn.name() == "IndexPutBackward0"


def test_more_index_tensors_than_one_dispatch_binds(device):
    """Six index tensors in six buffers: past the 8 storage bindings of a dispatch they are
    stacked into one (ops/lowering.py), for reading and for writing."""
    x = make((2, 3, 2, 3, 2, 2))
    idx = [T([1, 0]), T([2, 1]), T([0, 1]), T([2, 2]), T([1, 1]), T([0, 1])]
    check(lambda m, a, *i: a[i], x, *idx, device=device)
    check(lambda m, a, *i: a.index_put(i, m.tensor(5.0).to(a.device) if m is torchweb else m.tensor(5.0),
                                       accumulate=True), x, *idx, device=device)
