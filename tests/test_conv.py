"""Convolution against PyTorch, forward and backward, on both devices: conv1d/2d/3d (stride,
padding ints/tuples/'same'/'valid', dilation, groups, bias), conv_transpose1d/2d/3d,
nn.functional.unfold/fold, Tensor.unfold; bad input raises PyTorch's exception types."""

import pytest
import torch
import torch.nn.functional as F

import torchweb
import torchweb.nn.functional as TF
from oracle import assert_close, check, fast_ours, make, ours, ours_layout

TOL = {"rtol": 1e-4, "atol": 1e-4}


def check_grad(fn_torch, fn_ours, inputs, device, tol=TOL, layout="contiguous", none_ok=()):
    """Forward values and every float input's .grad against PyTorch (loss = sum(out * w))."""
    leaves_t = [t.clone().requires_grad_(t.is_floating_point()) if t is not None else None for t in inputs]
    exp = fn_torch(*leaves_t)
    leaves_o = [ours_layout(t, device, layout).detach().requires_grad_(t.is_floating_point())
                if t is not None else None for t in inputs]
    got = fn_ours(*leaves_o)
    assert_close(got, exp, **tol)
    w = make(exp.shape)
    (exp * w).sum().backward()
    (got * ours(w, device)).sum().backward()
    for i, (lt, lo) in enumerate(zip(leaves_t, leaves_o)):
        if lt is None or not lt.is_floating_point():
            continue
        assert lo.grad is not None, f"input {i} got no gradient"
        assert_close(lo.grad, lt.grad, **tol)
    return got


CONV2D = [
    dict(),
    dict(stride=2),
    dict(stride=(2, 1), padding=(1, 2)),
    dict(padding=1, dilation=2),
    dict(padding="same"),
    dict(padding="same", dilation=(1, 2)),
    dict(padding="valid", stride=3),
    dict(groups=2),
    dict(groups=4, padding=1),          # depthwise
    dict(groups=2, stride=2, padding=2, dilation=(2, 1)),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kw", CONV2D, ids=[str(k) for k in CONV2D])
def test_conv2d(device, kw, bias):
    x = make((2, 4, 7, 6))
    cout = 6 if kw.get("groups", 1) in (1, 2) else 8
    w = make((cout, 4 // kw.get("groups", 1), 3, 2))
    b = make((cout,)) if bias else None
    out = check_grad(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
                     [x, w, b], device)
    assert out.grad_fn.name() == "ConvolutionBackward0"


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(padding="same", dilation=2),
                                dict(groups=3, padding=2, dilation=2)])
def test_conv1d(device, kw):
    x, w, b = make((2, 3, 11)), make((6, 3 // kw.get("groups", 1), 3)), make((6,))
    check_grad(lambda x, w, b: F.conv1d(x, w, b, **kw), lambda x, w, b: TF.conv1d(x, w, b, **kw),
               [x, w, b], device)


@pytest.mark.parametrize("kw", [dict(), dict(stride=(1, 2, 2), padding=1), dict(padding="same"),
                                dict(groups=2, dilation=(1, 2, 1))])
def test_conv3d(device, kw):
    x, w, b = make((2, 4, 5, 6, 5)), make((4, 4 // kw.get("groups", 1), 3, 2, 3)), make((4,))
    check_grad(lambda x, w, b: F.conv3d(x, w, b, **kw), lambda x, w, b: TF.conv3d(x, w, b, **kw),
               [x, w, b], device)


def test_conv_torch_namespace_and_unbatched(device):
    x, w = make((3, 8, 8)), make((5, 3, 3, 3))
    check_grad(lambda x, w: torch.conv2d(x, w, None, 1, 1), lambda x, w: torchweb.conv2d(x, w, None, 1, 1),
               [x, w], device)
    x1, w1 = make((3, 10)), make((2, 3, 4))
    check_grad(lambda x, w: torch.conv1d(x, w), lambda x, w: torchweb.conv1d(x, w), [x1, w1], device)


def test_conv_pointwise_1x1(device):
    x, w, b = make((3, 8, 5, 4)), make((6, 8, 1, 1)), make((6,))
    check_grad(lambda x, w, b: F.conv2d(x, w, b), lambda x, w, b: TF.conv2d(x, w, b), [x, w, b], device)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_conv_non_contiguous(device, layout):
    x, w, b = make((3, 4, 6, 5)), make((2, 4, 3, 3)), make((2,))
    check_grad(lambda x, w, b: F.conv2d(x, w, b, padding=1), lambda x, w, b: TF.conv2d(x, w, b, padding=1),
               [x, w, b], device, layout=layout)


def test_conv_special_values(device):
    x = make((1, 2, 5, 5), special=True)
    w = make((3, 2, 2, 2))
    check(lambda m, x, w: m.nn.functional.conv2d(x, w), x, w, device=device, **TOL)


def test_conv_empty(device):
    check(lambda m, x, w: m.nn.functional.conv2d(x, w), make((0, 4, 5, 5)), make((2, 4, 3, 3)), device=device)
    check(lambda m, x, w: m.nn.functional.conv2d(x, w), make((2, 4, 5, 5)), make((0, 4, 3, 3)), device=device)
    check(lambda m, x, w: m.nn.functional.conv_transpose2d(x, w), make((0, 4, 5, 5)), make((4, 2, 3, 3)),
          device=device)


def test_conv_int(device):
    x = make((1, 2, 5, 5), dtype=torch.int64, low=-4, high=4)
    w = make((3, 2, 2, 2), dtype=torch.int64, low=-4, high=4)
    check(lambda m, x, w: m.nn.functional.conv2d(x, w), x, w, device=device)


def test_conv_batch_slices(device, monkeypatch):
    """A batch whose columns pass COLS_LIMIT goes in slices (forward, input and weight grads)."""
    from torchweb.ops import conv
    monkeypatch.setattr(conv, "COLS_LIMIT", 2 * 4 * 9 * 36)
    x, w, b = make((5, 4, 6, 6)), make((3, 4, 3, 3)), make((3,))
    check_grad(lambda x, w, b: F.conv2d(x, w, b, padding=1), lambda x, w, b: TF.conv2d(x, w, b, padding=1),
               [x, w, b], device)
    check_grad(lambda x, w: F.conv_transpose2d(x, w, stride=2), lambda x, w: TF.conv_transpose2d(x, w, stride=2),
               [make((5, 4, 3, 3)), make((4, 2, 3, 3))], device)


CONVT2D = [dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1),
           dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2), dilation=1),
           dict(groups=2, stride=2, dilation=2, output_padding=1), dict(padding=1, dilation=(2, 1))]


@pytest.mark.parametrize("kw", CONVT2D, ids=[str(k) for k in CONVT2D])
def test_conv_transpose2d(device, kw):
    x, w, b = make((2, 4, 4, 5)), make((4, 3, 3, 2)), make((3 * kw.get("groups", 1),))
    out = check_grad(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
                     lambda x, w, b: TF.conv_transpose2d(x, w, b, **kw), [x, w, b], device)
    assert out.grad_fn.name() == "ConvolutionBackward0"


def test_conv_transpose1d_3d(device):
    check_grad(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
               lambda x, w, b: TF.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
               [make((2, 3, 6)), make((3, 2, 4)), make((2,))], device)
    check_grad(lambda x, w: F.conv_transpose3d(x, w, stride=2, groups=2),
               lambda x, w: TF.conv_transpose3d(x, w, stride=2, groups=2),
               [make((1, 4, 3, 2, 3)), make((4, 1, 2, 3, 2))], device)


# -- unfold / fold ----------------------------------------------------------------------------
UNFOLD = [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2), dict(kernel_size=3, padding=1, dilation=2),
          dict(kernel_size=(3, 2), stride=(1, 2), padding=(2, 0), dilation=(1, 2))]


@pytest.mark.parametrize("kw", UNFOLD, ids=[str(k) for k in UNFOLD])
def test_unfold_fold(device, kw):
    x = make((2, 3, 7, 8))
    out = check_grad(lambda x: F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [x], device)
    assert out.grad_fn.name() == "Im2ColBackward0"
    cols = make(tuple(out.shape))
    back = check_grad(lambda c: F.fold(c, (7, 8), **kw), lambda c: TF.fold(c, (7, 8), **kw), [cols], device)
    assert back.grad_fn.name() == "Col2ImBackward0"


def test_unfold_fold_unbatched(device):
    check_grad(lambda x: F.unfold(x, 2), lambda x: TF.unfold(x, 2), [make((3, 4, 5))], device)
    check_grad(lambda c: F.fold(c, (4, 5), 2), lambda c: TF.fold(c, (4, 5), 2), [make((12, 12))], device)


@pytest.mark.parametrize("args", [(0, 2, 1), (1, 3, 2), (-1, 2, 3), (2, 4, 1), (1, 1, 1), (2, 5, 5)])
def test_tensor_unfold(device, args):
    x = make((3, 5, 5))
    out = check_grad(lambda x: x.unfold(*args), lambda x: x.unfold(*args), [x], device)
    assert out.grad_fn.name() == "UnfoldBackward0"
    assert out._storage is not None
    check(lambda m, x: x.unfold(*args), x, device=device, layout="strided")


def test_tensor_unfold_is_a_view(device):
    x = torchweb.arange(10.0, device=device)
    u = x.unfold(0, 3, 2)
    assert u._storage is x._storage and tuple(u.stride()) == (2, 1)
    x[2] = 100.0
    assert u[1, 0].item() == 100.0


def test_unfold_past_the_grid_limit(device):
    """im2col with more than 65535 * 256 outputs: the grid folds into 2-D."""
    x = torch.arange(2 * 1 * 1500 * 1500, dtype=torch.float32).reshape(2, 1, 1500, 1500) % 97
    got = TF.unfold(fast_ours(x, device), (3, 2), stride=(1, 1))
    exp = F.unfold(x, (3, 2))
    assert got.numel() > 65535 * 256
    assert torch.equal(torch.from_numpy(got.numpy()), exp)


# -- float16 ------------------------------------------------------------------------------------
def _f16_ok(device):
    return device == "cpu" or "shader-f16" in torchweb.webgpu.features()


def test_conv_float16(device):
    if not _f16_ok(device):
        pytest.skip("adapter without shader-f16")
    x, w = make((2, 3, 6, 6), dtype=torch.float16, low=-1, high=1), make((4, 3, 3, 3), dtype=torch.float16, low=-1, high=1)
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), x, w, device=device, rtol=1e-2, atol=1e-2)
    check(lambda m, x: m.nn.functional.unfold(x, 2), x, device=device)


# -- bad input ----------------------------------------------------------------------------------
BAD = {
    "input_rank": lambda m: m.nn.functional.conv2d(m.ones(2, 3), m.ones(2, 4, 3, 3)),
    "weight_rank": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3)),
    "channels": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 3, 3, 3)),
    "groups_weight": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(3, 2, 3, 3), groups=2),
    "groups_zero": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), groups=0),
    "kernel_too_big": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 7, 7)),
    "bias": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), m.ones(3)),
    "stride0": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), stride=0),
    "negative_padding": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), padding=-1),
    "padding_string": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), padding="foo"),
    "same_strided": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), padding="same", stride=2),
    "tuple_length": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), stride=(1, 1, 1)),
    "dilation0": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3), dilation=0),
    "dtype_mismatch": lambda m: m.nn.functional.conv2d(m.ones(2, 4, 5, 5), m.ones(2, 4, 3, 3, dtype=m.int64)),
    "convT_output_padding": lambda m: m.nn.functional.conv_transpose2d(m.ones(2, 4, 5, 5), m.ones(4, 2, 3, 3),
                                                                        stride=2, output_padding=2),
    "convT_channels": lambda m: m.nn.functional.conv_transpose2d(m.ones(2, 4, 5, 5), m.ones(3, 2, 3, 3)),
    "convT_same": lambda m: m.nn.functional.conv_transpose2d(m.ones(2, 4, 5, 5), m.ones(4, 2, 3, 3), padding="same"),
    "unfold_rank": lambda m: m.nn.functional.unfold(m.ones(2, 3, 4, 5, 6), 2),
    "unfold_int": lambda m: m.nn.functional.unfold(m.ones(1, 1, 4, 4, dtype=m.int64), 2),
    "fold_blocks": lambda m: m.nn.functional.fold(m.ones(1, 12, 10), (4, 5), 2),
    "fold_divisible": lambda m: m.nn.functional.fold(m.ones(1, 13, 12), (4, 5), 2),
    "tensor_unfold_size": lambda m: m.ones(2, 4, 5, 5).unfold(2, 6, 1),
    "tensor_unfold_step": lambda m: m.ones(2, 4, 5, 5).unfold(2, 2, 0),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(name):
    fn = BAD[name]
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(torchweb)
    # the message names the sizes where PyTorch's does
    for token in ("[2, 4, 3, 3]", "[3]", "7 x 7", "=13", "input.size(2)=10"):
        if token in str(expected.value):
            assert token in str(got.value), (str(got.value), str(expected.value))


def test_conv_position_slices(device, monkeypatch):
    """One batch entry whose columns pass COLS_LIMIT goes in slices of its output positions
    (forward, input gradient added slice by slice, weight gradient summed)."""
    from torchweb.ops import conv
    monkeypatch.setattr(conv, "COLS_LIMIT", 4 * 9 * 7)
    x, w, b = make((2, 4, 6, 7)), make((6, 2, 3, 3)), make((6,))
    check_grad(lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), lambda x, w, b: TF.conv2d(x, w, b, padding=1, groups=2),
               [x, w, b], device)
    check_grad(lambda x, w: F.conv1d(x, w, stride=2), lambda x, w: TF.conv1d(x, w, stride=2),
               [make((2, 4, 40)), make((3, 4, 5))], device, layout="strided")
    check_grad(lambda x, w: F.conv_transpose2d(x, w, stride=2), lambda x, w: TF.conv_transpose2d(x, w, stride=2),
               [make((2, 4, 3, 4)), make((4, 2, 3, 3))], device)
    check_grad(lambda x, w: F.conv2d(x, w), lambda x, w: TF.conv2d(x, w), [make((1, 4, 5, 1)), make((3, 4, 2, 1))],
               device, layout="transposed")
