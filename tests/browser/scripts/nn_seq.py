# Sequence modules forward and backward, weights and inputs from formulas: a TransformerEncoderLayer
# (post-norm, with a padding mask) and a pre-norm TransformerDecoderLayer, a MultiheadAttention
# returning its weights, a 2-layer bidirectional LSTM with projections, a GRU on a PackedSequence.
import math

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"


def values(n, k=0, scale=1.0):
    return [math.sin(0.7 * i + k) * scale for i in range(n)]


def x_of(shape, k=0, scale=1.0):
    return torch.tensor(values(math.prod(shape), k, scale)).reshape(shape).to(device)


def set_weights(m, k=0):
    with torch.no_grad():
        for i, (name, p) in enumerate(m.named_parameters()):
            p.copy_(x_of(tuple(p.shape), k + i, 0.4))


def grads(m):
    return {n: p.grad.tolist() for n, p in m.named_parameters() if p.grad is not None}


result = {}

enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, batch_first=True).to(device)
set_weights(enc, 1)
x = x_of((2, 5, 8), 2).requires_grad_(True)
kpm = torch.tensor([[False, False, False, True, True], [False] * 5]).to(device)
y = enc(x, src_key_padding_mask=kpm)
(y * x_of(tuple(y.shape), 3)).sum().backward()
result["encoder_layer"] = {"y": y.tolist(), "x_grad": x.grad.tolist(), "grads": grads(enc)}

dec = nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, norm_first=True,
                                 activation="gelu").to(device)
set_weights(dec, 4)
tgt, mem = x_of((3, 2, 8), 5).requires_grad_(True), x_of((4, 2, 8), 6)
y = dec(tgt, mem, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3).to(device), tgt_is_causal=True)
(y * x_of(tuple(y.shape), 7)).sum().backward()
result["decoder_layer"] = {"y": y.tolist(), "tgt_grad": tgt.grad.tolist(), "grads": grads(dec)}

mha = nn.MultiheadAttention(8, 4, kdim=6, vdim=5).to(device)
set_weights(mha, 8)
out, w = mha(x_of((3, 2, 8), 9), x_of((4, 2, 6), 10), x_of((4, 2, 5), 11))
result["mha"] = {"out": out.tolist(), "weights": w.tolist()}

lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).to(device)
set_weights(lstm, 12)
x = x_of((4, 2, 3), 13).requires_grad_(True)
h0, c0 = x_of((4, 2, 2), 14).requires_grad_(True), x_of((4, 2, 5), 15)
out, (h, c) = lstm(x, (h0, c0))
((out * x_of(tuple(out.shape), 16)).sum() + (h * x_of(tuple(h.shape), 17)).sum() + c.sum()).backward()
result["lstm"] = {"out": out.tolist(), "h": h.tolist(), "c": c.tolist(), "x_grad": x.grad.tolist(),
                  "h0_grad": h0.grad.tolist(), "grads": grads(lstm)}

gru = nn.GRU(3, 4, batch_first=True).to(device)
set_weights(gru, 18)
x = x_of((3, 5, 3), 19).requires_grad_(True)
packed = pack_padded_sequence(x, [2, 5, 3], batch_first=True, enforce_sorted=False)
out, h = gru(packed)
((out.data * x_of(tuple(out.data.shape), 20)).sum() + h.sum()).backward()
result["gru_packed"] = {"data": out.data.tolist(), "batch_sizes": out.batch_sizes.tolist(), "h": h.tolist(),
                        "x_grad": x.grad.tolist(), "grads": grads(gru)}

cell = nn.LSTMCell(3, 4).to(device)
set_weights(cell, 21)
h, c = cell(x_of((2, 3), 22))
result["lstm_cell"] = {"h": h.tolist(), "c": c.tolist()}
