"""nn.MultiheadAttention and F.multi_head_attention_forward vs PyTorch from the same state_dict:
outputs, returned attention weights, gradients of inputs and parameters, on both devices; self
and cross attention, kdim/vdim (separate projections), batch_first both ways, unbatched, bool
and float masks, add_bias_kv, add_zero_attn, is_causal, need_weights on and off; state_dict keys,
repr, initialization, errors."""

import math

import pytest
import torch

import torchweb
from nn_seq_helpers import compare, load_into_torch, mine, rand
from oracle import assert_close

E, H = 8, 2


def pair(*args, **kw):
    torchweb.manual_seed(0)
    return torchweb.nn.MultiheadAttention(*args, **kw), torch.nn.MultiheadAttention(*args, **kw)


def self_attn(**call_kw):
    return lambda mod, x, **k: mod(x, x, x, **call_kw, **k)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_self_attention(device, need_weights, batch_first):
    m, tm = pair(E, H, batch_first=batch_first)
    x = rand(3, 5, E, seed=1)  # (L, N, E) or (N, L, E)
    got = compare(m, tm, [x], device, call=self_attn(need_weights=need_weights))
    assert (got[1] is None) == (not need_weights)


@pytest.mark.parametrize("average", [True, False])
def test_cross_attention_weights(device, average):
    m, tm = pair(E, 4)
    q, k, v = rand(4, 2, E, seed=1), rand(6, 2, E, seed=2), rand(6, 2, E, seed=3)
    got = compare(m, tm, [q, k, v], device, kwargs={"average_attn_weights": average})
    assert tuple(got[1].shape) == ((2, 4, 6) if average else (2, 4, 4, 6))


def test_key_is_value(device):
    m, tm = pair(E, H, batch_first=True)
    compare(m, tm, [rand(2, 4, E, seed=1), rand(2, 6, E, seed=2)], device,
            call=lambda mod, q, kv: mod(q, kv, kv))


@pytest.mark.parametrize("need_weights", [True, False])
def test_kdim_vdim(device, need_weights):
    m, tm = pair(E, H, kdim=5, vdim=3)
    assert m.in_proj_weight is None and tuple(m.k_proj_weight.shape) == (E, 5)
    compare(m, tm, [rand(4, 2, E, seed=1), rand(6, 2, 5, seed=2), rand(6, 2, 3, seed=3)], device,
            kwargs={"need_weights": need_weights})


def test_no_bias(device):
    m, tm = pair(E, H, bias=False)
    assert m.in_proj_bias is None and m.out_proj.bias is None
    compare(m, tm, [rand(4, 2, E, seed=1)], device, call=self_attn())


@pytest.mark.parametrize("need_weights", [True, False])
def test_bias_kv_zero_attn(device, need_weights):
    m, tm = pair(E, H, add_bias_kv=True, add_zero_attn=True)
    kpm = torch.tensor([[False, False, True, False, True], [False, True, False, False, False]])
    am = torch.rand(3, 5, generator=torch.Generator().manual_seed(3)) > 0.7
    am[:, 0] = False
    compare(m, tm, [rand(3, 2, E, seed=1), rand(5, 2, E, seed=2), rand(5, 2, E, seed=3)], device,
            kwargs={"need_weights": need_weights, "key_padding_mask": kpm, "attn_mask": am})


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks(device, need_weights, kind):
    m, tm = pair(E, H, batch_first=True)
    g = torch.Generator().manual_seed(5)
    kpm = torch.rand(3, 6, generator=g) > 0.6
    kpm[:, 0] = False
    am = torch.rand(4, 6, generator=g) > 0.6
    am[:, 1] = False
    if kind == "float":
        kpm = torch.where(kpm, -1e4, 0.0) + torch.rand(3, 6, generator=g)
        am = torch.randn(4, 6, generator=g)
    compare(m, tm, [rand(3, 4, E, seed=1), rand(3, 6, E, seed=2), rand(3, 6, E, seed=3)], device,
            kwargs={"need_weights": need_weights, "key_padding_mask": kpm, "attn_mask": am})


def test_3d_attn_mask(device):
    m, tm = pair(E, H)
    am = torch.randn(2 * H, 4, 6, generator=torch.Generator().manual_seed(2))
    compare(m, tm, [rand(4, 2, E, seed=1), rand(6, 2, E, seed=2), rand(6, 2, E, seed=3)], device,
            kwargs={"attn_mask": am})
    compare(m, tm, [rand(4, 2, E, seed=1), rand(6, 2, E, seed=2), rand(6, 2, E, seed=3)], device,
            kwargs={"attn_mask": am, "need_weights": False})


@pytest.mark.parametrize("need_weights", [True, False])
def test_causal(device, need_weights):
    m, tm = pair(E, H, batch_first=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    compare(m, tm, [rand(2, 5, E, seed=1)], device,
            call=lambda mod, x, **k: mod(x, x, x, is_causal=True, need_weights=need_weights, **k),
            kwargs={"attn_mask": mask})


@pytest.mark.parametrize("need_weights", [True, False])
def test_unbatched(device, need_weights):
    m, tm = pair(E, H, batch_first=True)
    kpm = torch.tensor([False, True, False, False, False, True])
    compare(m, tm, [rand(4, E, seed=1), rand(6, E, seed=2), rand(6, E, seed=3)], device,
            kwargs={"need_weights": need_weights, "key_padding_mask": kpm})
    am = torch.randn(H, 4, 6, generator=torch.Generator().manual_seed(2))
    compare(m, tm, [rand(4, E, seed=1), rand(6, E, seed=2), rand(6, E, seed=3)], device,
            kwargs={"need_weights": need_weights, "attn_mask": am})


def test_dropout_eval_identity_and_train(device):
    m, tm = pair(E, H, dropout=0.5)
    compare(m, tm, [rand(4, 2, E, seed=1)], device, call=self_attn())  # eval: no dropout
    m.train()
    x = mine(rand(4, 2, E, seed=1), device)
    _, w = m(x, x, x, average_attn_weights=False)
    vals = w.flatten().tolist()
    zeros = sum(1 for v in vals if v == 0.0)
    assert 0.25 < zeros / len(vals) < 0.75
    assert max(vals) > 1.0 / 6  # survivors scaled by 2


def test_functional(device):
    tm = torch.nn.MultiheadAttention(E, H)
    sd = tm.state_dict()
    q, k, v = rand(4, 2, E, seed=1), rand(6, 2, E, seed=2), rand(6, 2, E, seed=3)
    args = lambda lib, conv: (conv(q), conv(k), conv(v), E, H, conv(sd["in_proj_weight"]), conv(sd["in_proj_bias"]),
                              None, None, False, 0.0, conv(sd["out_proj.weight"]), conv(sd["out_proj.bias"]))
    exp = torch.nn.functional.multi_head_attention_forward(*args(torch, lambda t: t), training=False)
    got = torchweb.nn.functional.multi_head_attention_forward(*args(torchweb, lambda t: mine(t, device)),
                                                             training=False)
    assert_close(got[0], exp[0].detach(), rtol=2e-5, atol=2e-5)
    assert_close(got[1], exp[1].detach(), rtol=2e-5, atol=2e-5)


def test_state_dict_keys_and_repr():
    for kw in [{}, {"kdim": 3, "vdim": 5}, {"bias": False, "add_bias_kv": True}]:
        m, tm = pair(E, H, **kw)
        assert list(m.state_dict()) == list(tm.state_dict())
        assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
        for (n, p), (_, tp) in zip(m.named_parameters(), tm.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape), n
        assert repr(m) == repr(tm)
        # torch -> torchweb too
        m.load_state_dict({k: mine(v, "cpu") for k, v in tm.state_dict().items()})
        assert_close(m.out_proj.weight, tm.out_proj.weight.detach())


def test_init():
    torchweb.manual_seed(1)
    m = torchweb.nn.MultiheadAttention(16, 4, add_bias_kv=True)
    a = math.sqrt(6.0 / (16 + 48))  # xavier_uniform_ on (3E, E)
    w = m.in_proj_weight.flatten().tolist()
    assert max(abs(x) for x in w) <= a and max(abs(x) for x in w) > 0.9 * a
    assert m.in_proj_bias.abs().max().item() == 0.0 and m.out_proj.bias.abs().max().item() == 0.0
    ob = 1 / math.sqrt(16)
    assert m.out_proj.weight.abs().max().item() <= ob
    assert m.bias_k.abs().max().item() > 0


def test_errors(device):
    with pytest.raises(ValueError):
        torchweb.nn.MultiheadAttention(0, 2)
    with pytest.raises(AssertionError):
        torchweb.nn.MultiheadAttention(6, 4)
    m, tm = pair(E, H)
    m.to(device)
    x = rand(2, 3, 4, E)
    with pytest.raises(AssertionError):
        tm(x, x, x)
    with pytest.raises(AssertionError):
        m(mine(x, device), mine(x, device), mine(x, device))
    q, k = rand(4, 2, E), rand(6, 2, E)
    for kw, exc in [({"attn_mask": torch.zeros(5, 6, dtype=torch.bool)}, RuntimeError),
                    ({"key_padding_mask": torch.zeros(2, 5, dtype=torch.bool)}, AssertionError),
                    ({"attn_mask": torch.zeros(4, 6, dtype=torch.int64)}, AssertionError),
                    ({"is_causal": True}, RuntimeError)]:
        with pytest.raises(exc):
            tm(q, k, k, **kw)
        with pytest.raises(exc):
            m(mine(q, device), mine(k, device), mine(k, device),
              **{a: mine(b, device) for a, b in kw.items()})
    with pytest.raises(AssertionError):  # query's embedding dim
        m(mine(rand(4, 2, 5), device), mine(k, device), mine(k, device))
