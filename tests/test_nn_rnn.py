"""nn.RNN, nn.LSTM, nn.GRU and the cells vs PyTorch from the same state_dict: outputs, h_n (and
c_n), and gradients of the input, the initial states and every parameter, on both devices;
multi-layer, bidirectional, batch_first both ways, proj_size, relu, no bias, unbatched inputs,
PackedSequence inputs (unsorted lengths); dropout between layers; parameter names, repr, init,
argument and shape errors with PyTorch's exception types."""

import math
import warnings

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence as t_pack

import torchweb
from torchweb.nn.utils.rnn import pack_padded_sequence as m_pack
from nn_seq_helpers import compare, mine, rand

I, H = 3, 4


def pair(name, *args, **kw):
    torchweb.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(torchweb.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)


def inp(batch_first, T=5, N=2, size=I, seed=1):
    return rand(N, T, size, seed=seed) if batch_first else rand(T, N, size, seed=seed)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_layers(device, name, batch_first, bidirectional):
    m, tm = pair(name, I, H, num_layers=2, batch_first=batch_first, bidirectional=bidirectional)
    compare(m, tm, [inp(batch_first)], device, train=True)


@pytest.mark.parametrize("name", ["RNN", "GRU"])
def test_initial_state(device, name):
    m, tm = pair(name, I, H, num_layers=2, bidirectional=True)
    compare(m, tm, [inp(False), rand(4, 2, H, seed=5)], device, train=True)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_proj_and_states(device, bidirectional):
    nd = 2 if bidirectional else 1
    m, tm = pair("LSTM", I, 5, num_layers=2, proj_size=2, bidirectional=bidirectional, batch_first=True)
    assert tuple(m.weight_hr_l0.shape) == (2, 5) and tuple(m.weight_hh_l1.shape) == (20, 2)
    compare(m, tm, [inp(True), rand(2 * nd, 2, 2, seed=5), rand(2 * nd, 2, 5, seed=6)], device, train=True,
            call=lambda mod, x, h, c: mod(x, (h, c)))


def test_relu_no_bias(device):
    m, tm = pair("RNN", I, H, 2, nonlinearity="relu", bias=False)
    assert "bias_ih_l0" not in dict(m.named_parameters())
    compare(m, tm, [inp(False)], device, train=True)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched(device, name):
    m, tm = pair(name, I, H, num_layers=2, bidirectional=True, batch_first=True)
    compare(m, tm, [rand(5, I, seed=1)], device, train=True)
    if name == "LSTM":
        compare(m, tm, [rand(5, I, seed=1), rand(4, H, seed=2), rand(4, H, seed=3)], device, train=True,
                call=lambda mod, x, h, c: mod(x, (h, c)))
    else:
        compare(m, tm, [rand(5, I, seed=1), rand(4, H, seed=2)], device, train=True)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed(device, name, bidirectional):
    m, tm = pair(name, I, H, num_layers=2, bidirectional=bidirectional)
    lengths = [3, 5, 1, 4]

    def call(mod, x, *h):
        pack = t_pack if isinstance(mod, torch.nn.Module) else m_pack
        p = pack(x, lengths, enforce_sorted=False)
        out, hn = mod(p, (h[0], h[1]) if len(h) == 2 else (h[0] if h else None))
        return out.data, hn
    compare(m, tm, [inp(False, N=4)], device, train=True, call=call)
    nd = 2 if bidirectional else 1
    states = [rand(2 * nd, 4, H, seed=7)] + ([rand(2 * nd, 4, H, seed=8)] if name == "LSTM" else [])
    compare(m, tm, [inp(False, N=4)] + states, device, train=True, call=call)


def test_packed_returns_packed(device):
    m = torchweb.nn.GRU(I, H).to(device)
    x = mine(inp(False, N=3), device)
    out, h = m(m_pack(x, [5, 2, 3], enforce_sorted=False))
    assert type(out).__name__ == "PackedSequence" and out.batch_sizes.tolist() == [3, 3, 2, 1, 1]
    assert tuple(h.shape) == (1, 3, H)


def test_dropout(device):
    m, tm = pair("LSTM", I, H, num_layers=3, dropout=0.5)
    compare(m, tm, [inp(False)], device)  # eval: no dropout
    m.train()
    x = mine(inp(False), device)
    torchweb.manual_seed(3)
    a = m(x)[0]
    torchweb.manual_seed(3)
    b = m(x)[0]
    m.eval()
    c = m(x)[0]
    assert a.tolist() == b.tolist()
    assert (a - c).abs().max().item() > 1e-4


@pytest.mark.parametrize("name,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                                     ("LSTMCell", {}), ("GRUCell", {})])
def test_cells(device, name, kw):
    m, tm = pair(name, I, H, **kw)
    assert repr(m) == repr(tm)
    compare(m, tm, [rand(2, I, seed=1)], device, train=True)
    compare(m, tm, [rand(I, seed=1)], device, train=True)  # unbatched
    if name == "LSTMCell":
        compare(m, tm, [rand(2, I, seed=1), rand(2, H, seed=2), rand(2, H, seed=3)], device, train=True,
                call=lambda mod, x, h, c: mod(x, (h, c)))
    else:
        compare(m, tm, [rand(2, I, seed=1), rand(2, H, seed=2)], device, train=True)


def test_names_repr_init_and_both_ways():
    for name, args, kw in [("RNN", (I, H), {}), ("LSTM", (I, 6, 3), {"proj_size": 2, "bidirectional": True}),
                           ("GRU", (I, H, 2), {"bias": False, "batch_first": True, "dropout": 0.25}),
                           ("RNN", (I, H, 1, "relu"), {})]:
        m, tm = pair(name, *args, **kw)
        assert list(m.state_dict()) == list(tm.state_dict()) == m._flat_weights_names
        assert repr(m) == repr(tm)
        for (n, p), (_, tp) in zip(m.named_parameters(), tm.named_parameters()):
            assert tuple(p.shape) == tuple(tp.shape), n
        m.load_state_dict({k: mine(v, "cpu") for k, v in tm.state_dict().items()})
        assert m.all_weights[0][0].tolist() == tm.all_weights[0][0].tolist()
        m.flatten_parameters()
    torchweb.manual_seed(0)
    m = torchweb.nn.LSTM(8, 16)
    bound = 1 / math.sqrt(16)
    vals = [v for p in m.parameters() for v in p.flatten().tolist()]
    assert max(abs(v) for v in vals) <= bound and max(abs(v) for v in vals) > 0.9 * bound


def test_constructor_errors():
    cases = [(("RNN", I, H), {"nonlinearity": "sigmoid"}), (("GRU", I, H), {"proj_size": 2}),
             (("LSTM", I, H), {"proj_size": H}), (("LSTM", I, H), {"proj_size": -1}),
             (("RNN", I, H), {"dropout": 1.5}), (("RNN", I, 0), {}), (("RNN", I, H), {"num_layers": 0}),
             (("RNN", I, 4.0), {}), (("RNN", I, H), {"dropout": True})]
    for (name, *args), kw in cases:
        with pytest.raises(Exception) as their:
            getattr(torch.nn, name)(*args, **kw)
        with pytest.raises(their.type):
            getattr(torchweb.nn, name)(*args, **kw)
    with pytest.warns(UserWarning, match="dropout option adds dropout"):
        torchweb.nn.GRU(I, H, dropout=0.2)


def test_forward_errors(device):
    for name in ["RNN", "LSTM", "GRU"]:
        m, tm = pair(name, I, H, num_layers=2)
        m.to(device)
        bad = [((rand(5, 2, I + 1),), None), ((rand(2, 5, 2, I),), None), ((rand(5, I),), (rand(2, 1, H), rand(2, 1, H))),
               ((rand(5, 2, I),), (rand(2, 3, H), rand(2, 3, H))), ((rand(5, 2, I),), (rand(1, 2, H), rand(1, 2, H))),
               ((rand(5, 2, I).half(),), None)]
        for (x,), states in bad:
            if states is not None:
                states = states if name == "LSTM" else states[0]
            with pytest.raises(Exception) as their:
                tm(x, states)
            mx = mine(x, device)
            ms = None if states is None else (tuple(mine(s, device) for s in states) if name == "LSTM"
                                              else mine(states, device))
            with pytest.raises(their.type):
                m(mx, ms)
    for name in ["RNNCell", "LSTMCell", "GRUCell"]:
        m, tm = pair(name, I, H)
        for x in [rand(2, I + 1), rand(2, 2, I)]:
            with pytest.raises(Exception) as their:
                tm(x)
            with pytest.raises(their.type):
                m(mine(x, device))
