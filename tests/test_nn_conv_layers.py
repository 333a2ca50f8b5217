"""nn.Conv1d/2d/3d and nn.ConvTranspose1d/2d/3d (nn/modules/conv.py) against PyTorch's modules
from the same state_dict: forward, input and parameter gradients on both devices, repr,
state_dict keys, default initialization bounds, constructor and forward errors."""

import math

import pytest
import torch

import torchweb
from nn_layer_oracle import check_ctor_error, check_forward_error, check_module, pair, run, uniform_bounds
from oracle import make

CONV = [
    ("Conv1d", (2, 4, 3), {}, (2, 2, 7)),
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1, "bias": False}, (2, 2, 8)),
    ("Conv1d", (4, 6, 3), {"groups": 2, "dilation": 2, "padding": "same"}, (2, 4, 9)),
    ("Conv1d", (2, 3, 4), {"padding": "same"}, (1, 2, 6)),           # even kernel: asymmetric padding
    ("Conv1d", (2, 3, 3), {"padding": 2, "padding_mode": "reflect"}, (2, 2, 6)),
    ("Conv1d", (2, 3, 3), {"padding": 1, "padding_mode": "circular"}, (2, 3)),   # unbatched
    ("Conv2d", (3, 4, 3), {}, (2, 3, 6, 5)),
    ("Conv2d", (3, 4, (3, 2)), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}, (2, 3, 7, 6)),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": 1, "bias": False}, (1, 4, 5, 5)),   # depthwise
    ("Conv2d", (2, 3, 3), {"padding": "valid"}, (2, 2, 5, 4)),
    ("Conv2d", (2, 3, (2, 3)), {"padding": "same", "padding_mode": "replicate"}, (2, 2, 5, 4)),
    ("Conv2d", (2, 3, 3), {"padding": (1, 2), "padding_mode": "reflect"}, (2, 2, 5, 5)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "circular", "stride": 2}, (2, 2, 5, 6)),
    ("Conv2d", (2, 3, 1), {}, (2, 2, 3, 3)),
    ("Conv2d", (2, 3, 3), {"padding": 1}, (2, 4, 4)),   # unbatched
    ("Conv3d", (2, 3, 2), {}, (2, 2, 3, 4, 3)),
    ("Conv3d", (2, 4, (1, 2, 3)), {"stride": (1, 2, 1), "padding": (0, 1, 1), "groups": 2}, (1, 2, 3, 4, 5)),
    ("Conv3d", (2, 2, 3), {"padding": 1, "padding_mode": "replicate", "bias": False}, (1, 2, 3, 3, 3)),
    ("ConvTranspose1d", (3, 2, 3), {}, (2, 3, 5)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, (2, 4, 4)),
    ("ConvTranspose1d", (2, 2, 2), {"dilation": 2, "bias": False}, (2, 4)),   # unbatched
    ("ConvTranspose2d", (3, 2, 3), {"stride": 2}, (2, 3, 3, 4)),
    ("ConvTranspose2d", (2, 4, (2, 3)), {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2),
                                         "dilation": (1, 1)}, (1, 2, 3, 3)),
    ("ConvTranspose2d", (4, 4, 3), {"groups": 2, "dilation": 2, "padding": 1}, (2, 4, 3, 3)),
    ("ConvTranspose3d", (2, 3, 2), {"stride": 2}, (1, 2, 2, 3, 2)),
    ("ConvTranspose3d", (2, 2, (1, 2, 2)), {"padding": (0, 1, 0), "output_padding": (0, 1, 0),
                                            "stride": (1, 2, 1)}, (2, 3, 3, 2)),   # unbatched
]


def _build(name, args, kw):
    return lambda nn: getattr(nn, name)(*args, **kw)


@pytest.mark.parametrize("name,args,kw,shape", CONV, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONV)])
def test_conv_module_forward_backward(device, name, args, kw, shape):
    check_module(_build(name, args, kw), [make(shape)], device, modes=("train",))


def test_conv_eval_same_as_train(device):
    mine, ref = pair(_build("Conv2d", (2, 3, 3), {}), device)
    mine.eval()
    ref.eval()
    run(mine, ref, [make((1, 2, 4, 4))], device, grad=False)


def test_conv_transpose_output_size(device):
    build = _build("ConvTranspose2d", (2, 3, 3), {"stride": 2, "padding": 1})
    x = make((2, 2, 3, 4))
    for size in ([6, 8], [5, 7], (2, 3, 6, 7), torch.Size([5, 8])):
        mine, ref = pair(build, device)
        run(mine, ref, [x], device, kwargs={"output_size": size})
    mine, ref = pair(_build("ConvTranspose1d", (2, 3, 3), {"stride": 3}), device)
    run(mine, ref, [make((2, 4))], device, kwargs={"output_size": [14]})   # unbatched, output_padding 2


@pytest.mark.parametrize("size", [[4, 8], [7, 7], [1, 2, 3], [2, 3, 6, 8, 1]])
def test_conv_transpose_bad_output_size(device, size):
    build = _build("ConvTranspose2d", (2, 3, 3), {"stride": 2, "padding": 1})
    x = make((2, 2, 3, 4))
    mine, ref = pair(build, device)
    with pytest.raises(ValueError) as e:
        ref(x, output_size=size)
    with pytest.raises(ValueError) as e2:
        mine(torchweb.tensor(x.tolist(), device=device), output_size=size)
    assert str(e2.value) == str(e.value)


@pytest.mark.parametrize("name,args,kw", [
    ("Conv2d", (4, 6, 3), {"groups": 0}),
    ("Conv2d", (4, 6, 3), {"groups": -1}),
    ("Conv2d", (3, 6, 3), {"groups": 2}),
    ("Conv2d", (4, 5, 3), {"groups": 2}),
    ("Conv1d", (2, 2, 3), {"padding": "full"}),
    ("Conv2d", (2, 2, 3), {"padding": "same", "stride": 2}),
    ("Conv2d", (2, 2, 3), {"padding_mode": "zero"}),
    ("ConvTranspose2d", (2, 2, 3), {"padding_mode": "reflect"}),
    ("ConvTranspose1d", (4, 6, 3), {"groups": 4}),
    ("Conv3d", (3, 6, 3), {"groups": 2}),
])
def test_conv_constructor_errors(name, args, kw):
    check_ctor_error(_build(name, args, kw))


@pytest.mark.parametrize("name,args,kw,shape", [
    ("Conv2d", (3, 4, 3), {}, (2, 2, 5, 5)),          # wrong channel count
    ("Conv2d", (3, 4, 3), {}, (3, 5)),                 # wrong rank
    ("Conv1d", (2, 4, 5), {}, (1, 2, 3)),              # kernel larger than input
    ("Conv2d", (2, 4, 3), {"padding": 3, "padding_mode": "reflect"}, (1, 2, 3, 3)),   # reflect pad >= size
    ("ConvTranspose2d", (3, 2, 3), {}, (1, 2, 4, 4)),
])
def test_conv_forward_errors(device, name, args, kw, shape):
    check_forward_error(_build(name, args, kw), [make(shape)], device)


@pytest.mark.parametrize("name,args,kw,fan_in", [
    ("Conv1d", (8, 4, 5), {}, 40),
    ("Conv2d", (16, 8, 3), {}, 144),
    ("Conv2d", (16, 8, 3), {"groups": 4}, 36),
    ("Conv3d", (4, 6, 2), {}, 32),
    ("ConvTranspose2d", (16, 8, 3), {}, 72),         # fan_in of (in, out/groups, k, k): out/groups * k*k
    ("ConvTranspose1d", (6, 4, 3), {"groups": 2}, 6),
])
def test_conv_default_init(device, name, args, kw, fan_in):
    torchweb.manual_seed(0)
    m = getattr(torchweb.nn, name)(*args, **kw, device=device)
    ref = getattr(torch.nn, name)(*args, **kw)
    assert tuple(m.weight.shape) == tuple(ref.weight.shape)
    assert tuple(m.bias.shape) == tuple(ref.bias.shape)
    bound = 1 / math.sqrt(fan_in)
    uniform_bounds(m.weight, bound)
    uniform_bounds(m.bias, bound)
    assert m.weight.requires_grad and isinstance(m.weight, torchweb.nn.Parameter)
    assert m.weight.device.type == device


def test_conv_init_deterministic():
    torchweb.manual_seed(3)
    a = torchweb.nn.Conv2d(3, 4, 3).weight.tolist()
    torchweb.manual_seed(3)
    b = torchweb.nn.Conv2d(3, 4, 3).weight.tolist()
    assert a == b
    assert torchweb.nn.Conv2d(3, 4, 3).weight.tolist() != a


def test_conv_attributes():
    m = torchweb.nn.Conv2d(3, 4, 3, padding="same", dilation=2)
    r = torch.nn.Conv2d(3, 4, 3, padding="same", dilation=2)
    for a in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "transposed",
              "output_padding", "groups", "padding_mode", "_reversed_padding_repeated_twice"):
        assert getattr(m, a) == getattr(r, a), a
    t = torchweb.nn.ConvTranspose3d(2, 4, (1, 2, 3), stride=2, output_padding=1)
    rt = torch.nn.ConvTranspose3d(2, 4, (1, 2, 3), stride=2, output_padding=1)
    for a in ("kernel_size", "stride", "padding", "output_padding", "transposed", "_reversed_padding_repeated_twice"):
        assert getattr(t, a) == getattr(rt, a), a
    for name in ("LazyConv2d", "LazyConvTranspose1d"):   # (lazy modules: tests/test_nn_lazy.py)
        assert repr(getattr(torchweb.nn, name)(4, 3)) == repr(getattr(torch.nn, name)(4, 3))


def test_conv_dtype_and_half(device):
    m = torchweb.nn.Conv2d(2, 3, 3, dtype=torchweb.float16, device=device)
    assert m.weight.dtype == torchweb.float16 and m.bias.dtype == torchweb.float16
    x = torchweb.ones((1, 2, 4, 4), dtype=torchweb.float16, device=device)
    assert m(x).dtype == torchweb.float16
