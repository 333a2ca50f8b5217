"""nn.Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer) vs PyTorch from the same
state_dict: outputs and gradients of inputs and every parameter on both devices; post- and
pre-norm, batch_first both ways, relu/gelu/callable activations, masks (bool and float, padding,
causal), unbatched inputs, bias=False; state_dict keys, repr, init, errors."""

import math
import warnings

import pytest
import torch

import torchweb
from nn_seq_helpers import compare, mine, rand
from oracle import assert_close

D, H, FF = 8, 2, 12


def pair(name, *args, **kw):
    torchweb.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(torchweb.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)


def layer_kw(**kw):
    return dict(dim_feedforward=FF, dropout=0.0, **kw)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer(device, norm_first, batch_first):
    m, tm = pair("TransformerEncoderLayer", D, H, **layer_kw(norm_first=norm_first, batch_first=batch_first))
    compare(m, tm, [rand(3, 4, D, seed=1)], device, train=True)


@pytest.mark.parametrize("activation", ["gelu", "callable"])
def test_encoder_layer_activation(device, activation):
    act = activation
    if activation == "callable":
        m, tm = pair("TransformerEncoderLayer", D, H, **layer_kw(activation=torchweb.nn.functional.silu))
        tm.activation = torch.nn.functional.silu
        assert m.activation_relu_or_gelu == 0
    else:
        m, tm = pair("TransformerEncoderLayer", D, H, **layer_kw(activation=act))
        assert m.activation_relu_or_gelu == 2
    compare(m, tm, [rand(3, 4, D, seed=1)], device, train=True)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_encoder_layer_masks(device, kind):
    m, tm = pair("TransformerEncoderLayer", D, H, **layer_kw(batch_first=True))
    g = torch.Generator().manual_seed(3)
    kpm = torch.tensor([[False, False, False, True, True], [False, False, False, False, False]])
    am = torch.rand(5, 5, generator=g) > 0.6
    am[:, 0] = False
    if kind == "float":
        kpm = torch.where(kpm, float("-inf"), 0.0)
        am = torch.randn(5, 5, generator=g)
    compare(m, tm, [rand(2, 5, D, seed=1)], device, train=True,
            kwargs={"src_mask": am, "src_key_padding_mask": kpm})


def test_encoder_layer_causal_and_unbatched(device):
    m, tm = pair("TransformerEncoderLayer", D, H, **layer_kw())
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    compare(m, tm, [rand(5, 2, D, seed=1)], device, train=True, kwargs={"src_mask": mask, "is_causal": True})
    compare(m, tm, [rand(5, D, seed=2)], device, train=True, kwargs={"src_mask": mask})


def test_encoder_layer_no_bias_eval_dropout(device):
    m, tm = pair("TransformerEncoderLayer", D, H, dim_feedforward=FF, bias=False)  # dropout 0.1, eval
    assert m.norm1.bias is None
    compare(m, tm, [rand(3, 2, D, seed=1)], device)


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_stack(device, batch_first):
    torchweb.manual_seed(0)
    layer = torchweb.nn.TransformerEncoderLayer(D, H, **layer_kw(batch_first=batch_first))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = torchweb.nn.TransformerEncoder(layer, 2, norm=torchweb.nn.LayerNorm(D))
        tm = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, H, **layer_kw(batch_first=batch_first)),
                                         2, norm=torch.nn.LayerNorm(D))
    assert m.layers[0] is not layer and m.layers[0] is not m.layers[1]
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4)  # detected as causal
    shape = (3, 4, D) if batch_first else (4, 3, D)
    compare(m, tm, [rand(*shape, seed=1)], device, train=True, kwargs={"mask": mask})
    kpm = torch.tensor([[False, False, True, True]] * 3)
    compare(m, tm, [rand(*shape, seed=2)], device, train=True, kwargs={"src_key_padding_mask": kpm})


def test_encoder_nested_eval_zeros_padding(device):
    """PyTorch's nested-tensor path (eval, no grad, left-aligned padding) gives zeros there."""
    m, tm = pair("TransformerEncoderLayer", D, H, dim_feedforward=FF, batch_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = torchweb.nn.TransformerEncoder(m, 2)
        tenc = torch.nn.TransformerEncoder(tm, 2)
    kpm = torch.tensor([[False, False, False, True], [False, False, False, False]])

    def call(mod, x, **k):
        with (torch.no_grad() if isinstance(mod, torch.nn.Module) else torchweb.no_grad()):
            return mod(x, **k)
    got = compare(enc, tenc, [rand(2, 4, D, seed=1)], device, grad=False, kwargs={"src_key_padding_mask": kpm},
                  call=call)
    assert got[0, 3].abs().max().item() == 0.0


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer(device, norm_first, batch_first):
    m, tm = pair("TransformerDecoderLayer", D, H, **layer_kw(norm_first=norm_first, batch_first=batch_first))
    tgt, mem = (rand(2, 3, D, seed=1), rand(2, 5, D, seed=2)) if batch_first else \
        (rand(3, 2, D, seed=1), rand(5, 2, D, seed=2))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    mkpm = torch.tensor([[False, False, False, False, True], [False, False, True, True, True]])
    compare(m, tm, [tgt, mem], device, train=True,
            kwargs={"tgt_mask": mask, "memory_key_padding_mask": mkpm, "tgt_is_causal": True})


def test_decoder_stack_unbatched(device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torchweb.manual_seed(0)
        m = torchweb.nn.TransformerDecoder(torchweb.nn.TransformerDecoderLayer(D, H, **layer_kw(activation="gelu")),
                                           2, norm=torchweb.nn.LayerNorm(D))
        tm = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, H, **layer_kw(activation="gelu")), 2,
                                         norm=torch.nn.LayerNorm(D))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    compare(m, tm, [rand(3, D, seed=1), rand(4, D, seed=2)], device, train=True, kwargs={"tgt_mask": mask})


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(device, batch_first):
    m, tm = pair("Transformer", D, H, 2, 1, FF, 0.0, batch_first=batch_first)
    src, tgt = (rand(2, 5, D, seed=1), rand(2, 3, D, seed=2)) if batch_first else \
        (rand(5, 2, D, seed=1), rand(3, 2, D, seed=2))
    mask = torchweb.nn.Transformer.generate_square_subsequent_mask(3)
    kw = {"tgt_mask": torch.tensor(mask.tolist()),
          "src_key_padding_mask": torch.tensor([[False] * 5, [False, False, False, True, True]])}
    compare(m, tm, [src, tgt], device, train=True, kwargs=kw)


def test_transformer_norm_first_eval(device):
    m, tm = pair("Transformer", D, H, 1, 1, FF, norm_first=True, bias=False)  # dropout 0.1, eval
    compare(m, tm, [rand(4, 2, D, seed=1), rand(3, 2, D, seed=2)], device)


def test_generate_square_subsequent_mask():
    got = torchweb.nn.Transformer.generate_square_subsequent_mask(4)
    assert_close(got, torch.nn.Transformer.generate_square_subsequent_mask(4))
    assert got.dtype == torchweb.float32


def test_state_dict_keys_repr_and_init():
    for name, args, kw in [("TransformerEncoderLayer", (D, H), {}), ("TransformerDecoderLayer", (D, H), {"bias": False}),
                           ("Transformer", (D, H, 2, 2, FF), {}), ("Transformer", (D, H, 1, 1, FF), {"norm_first": True})]:
        m, tm = pair(name, *args, **kw)
        assert list(m.state_dict()) == list(tm.state_dict())
        for (n, p), (_, tp) in zip(m.state_dict().items(), tm.state_dict().items()):
            assert tuple(p.shape) == tuple(tp.shape), n
        assert repr(m) == repr(tm)
        m.load_state_dict({k: mine(v, "cpu") for k, v in tm.state_dict().items()})  # torch -> torchweb
    torchweb.manual_seed(0)
    m = torchweb.nn.Transformer(16, 2, 1, 1, 32)
    w = m.encoder.layers[0].linear1.weight  # xavier_uniform_ on (32, 16)
    a = math.sqrt(6.0 / 48)
    assert 0.8 * a < w.abs().max().item() <= a
    assert m.encoder.norm.weight.min().item() == 1.0


def test_warning_and_errors():
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        torchweb.nn.TransformerEncoder(torchweb.nn.TransformerEncoderLayer(D, H, dim_feedforward=FF), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchweb.nn.TransformerEncoder(torchweb.nn.TransformerEncoderLayer(D, H, dim_feedforward=FF), 1,
                                       enable_nested_tensor=False)
    with pytest.raises(RuntimeError):
        torchweb.nn.TransformerEncoderLayer(D, H, activation="tanh")
    m = torchweb.nn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match="batch number"):
        m(torchweb.zeros(4, 2, D), torchweb.zeros(3, 3, D))
    with pytest.raises(RuntimeError, match="feature number"):
        m(torchweb.zeros(4, 2, D), torchweb.zeros(3, 2, D + 1))
    tm = torch.nn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(RuntimeError):
        tm(torch.zeros(4, 2, D), torch.zeros(3, 3, D))
