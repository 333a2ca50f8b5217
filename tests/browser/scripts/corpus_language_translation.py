# Browser-tier copy of torchweb's corpus program pytorch/examples language_translation: the vendored code below is
# unchanged but for the imports named here; the driver at the end sets formula weights
# and records forward, loss, gradients and optimizer steps (tests/test_corpus.py runs
# the same program natively).
# From https://github.com/pytorch/examples @ 77f55b9, language_translation/src/model.py
# License: BSD-3-Clause, Copyright (c) 2017, Pytorch contributors (full text in tests/corpus/LICENSES.md).
# Unchanged.

import math

import torch
from torch.nn import functional as F
from torch import nn

class PositionalEncoding(nn.Module):
    def __init__(
        self,
        emb_size,
        dropout,
        maxlen=5000
    ):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(- torch.arange(0, emb_size, 2)* math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)

        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding)

    def forward(self, token_embedding):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

class Translator(nn.Module):
    def __init__(
            self,
            num_encoder_layers,
            num_decoder_layers,
            embed_size,
            num_heads,
            src_vocab_size,
            tgt_vocab_size,
            dim_feedforward,
            dropout
        ):
        super(Translator, self).__init__()

        # Output of embedding must be equal (embed_size)
        self.src_embedding = nn.Embedding(src_vocab_size, embed_size)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_size)

        self.pos_enc = PositionalEncoding(embed_size, dropout)

        self.transformer = nn.Transformer(
            d_model=embed_size,
            nhead=num_heads,
            num_encoder_layers=num_encoder_layers,
            num_decoder_layers=num_decoder_layers,
            dim_feedforward=dim_feedforward,
            dropout=dropout
        )

        self.ff = nn.Linear(embed_size, tgt_vocab_size)

        self._init_weights()

    def _init_weights(self):
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, memory_key_padding_mask):

        src_emb = self.pos_enc(self.src_embedding(src))
        tgt_emb = self.pos_enc(self.tgt_embedding(trg))

        outs = self.transformer(
            src_emb,
            tgt_emb,
            src_mask,
            tgt_mask,
            None,
            src_padding_mask,
            tgt_padding_mask,
            memory_key_padding_mask
        )

        return self.ff(outs)

    def encode(self, src, src_mask):

        embed = self.src_embedding(src)

        pos_enc = self.pos_enc(embed)

        return self.transformer.encoder(pos_enc, src_mask)

    def decode(self, tgt, memory, tgt_mask):
        
        embed = self.tgt_embedding(tgt)

        pos_enc = self.pos_enc(embed)

        return self.transformer.decoder(pos_enc, memory, tgt_mask)


# -- driver (torchweb's corpus, browser tier): weights and inputs from formulas, no random draws --
import math as _math

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"


def _values(n, k=0, scale=1.0):
    return [_math.sin(0.7 * i + k) * scale for i in range(n)]


def x_of(shape, k=0, scale=1.0):
    return torch.tensor(_values(_math.prod(shape), k, scale)).reshape(shape).to(device)


def set_weights(m, k=0):
    """Every parameter from a formula, scaled by 1/sqrt(fan-in) (biases 0.1)."""
    with torch.no_grad():
        for i, (name, p) in enumerate(m.named_parameters()):
            fan_in = p.numel() // p.shape[0] if p.dim() > 1 else 100
            p.copy_(x_of(tuple(p.shape), k + i, 1.0 / _math.sqrt(fan_in)))


def rounded(t):
    return [round(v, 6) for v in t.detach().reshape(-1).tolist()]


result = {}
def train_steps(model, loss_fn, steps=3, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def grad_summary(model):
    return {n: [p.grad.abs().sum().item()] + rounded(p.grad)[:6] for n, p in model.named_parameters()
            if p.grad is not None}

model = Translator(1, 1, 8, 2, 11, 13, 16, 0.0).to(device)
set_weights(model, 2)
src = torch.tensor([[(3 * i + j) % 11 for j in range(2)] for i in range(5)]).to(device)
tgt = torch.tensor([[(5 * i + 2 * j) % 13 for j in range(2)] for i in range(4)]).to(device)
tgt_mask = nn.Transformer.generate_square_subsequent_mask(4).to(device)
pad = torch.tensor([[False, False, False, False, True], [False] * 5]).to(device)


def loss_of():
    out = model(src, tgt, None, tgt_mask, pad, None, pad)
    return nn.CrossEntropyLoss()(out.reshape(-1, 13), tgt.reshape(-1))


out = model(src, tgt, None, tgt_mask, pad, None, pad)
loss = nn.CrossEntropyLoss()(out.reshape(-1, 13), tgt.reshape(-1))
loss.backward()
result["out"] = rounded(out)
result["loss"] = loss.item()
result["grads"] = grad_summary(model)
result["losses"] = train_steps(model, loss_of)
model.eval()
with torch.no_grad():
    memory = model.encode(src, None)
    result["decode"] = rounded(model.decode(tgt, memory, tgt_mask))
