"""The "GPT" demo: a small character-level GPT learning Shakespeare's Sonnets (text.txt).

Ordinary PyTorch code (torch, torch.nn, torch.nn.functional, torch.optim; no numpy): it runs
unchanged on PyTorch and on torchweb (after torchweb.install_torch_alias(), or executed with
`torch` bound to torchweb). In the page (site/gpt.html) it runs in a module Web Worker:

    vocab = make_vocab(text)
    model = GPT(vocab).to(device)
    history = train(model, text, steps=300, progress=lambda step, loss: ...)
    print(sample(model, "Shall I ", 200, temperature=0.8))
    data = save_bytes(model)          # a torch.save file (bytes): PyTorch loads it too
    model = load_bytes(data, device)

The batches' windows are drawn with Python's own seeded `random`, so for the same initial
weights both libraries see the same data and give the same losses (tests/test_chargpt_model.py).
"""

import io
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = {"block_size": 64, "n_layer": 2, "n_head": 4, "n_embd": 64}
FORMAT = "chargpt-1"        # checkpoints name their format, so a wrong file fails plainly


def make_vocab(text):
    """The model's alphabet: the text's distinct characters, sorted, as one string."""
    return "".join(sorted(set(text)))


def encode(vocab, s):
    """Character ids of s; characters outside the vocabulary raise ValueError naming them."""
    index = {c: i for i, c in enumerate(vocab)}
    missing = sorted(set(s) - set(index))
    if missing:
        raise ValueError(f"characters not in the model's alphabet: {''.join(missing)!r}")
    return [index[c] for c in s]


def decode(vocab, ids):
    return "".join(vocab[i] for i in ids)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # (B, T, C) -> (B, heads, T, C / heads)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block_size=64, n_layer=2, n_head=4, n_embd=64):
        super().__init__()
        self.vocab = vocab
        self.config = {"block_size": block_size, "n_layer": n_layer, "n_head": n_head, "n_embd": n_embd}
        self.block_size = block_size
        self.tok = nn.Embedding(len(vocab), n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, len(vocab))

    def forward(self, idx, targets=None):
        """idx (B, T) int64 -> (logits (B, T, vocab), loss or None)."""
        B, T = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
        return logits, loss


def batch_starts(rng, n_ids, block_size, batch_size):
    """Random window starts in the text (Python's random: the same on every library)."""
    return [rng.randrange(n_ids - block_size - 1) for _ in range(batch_size)]


def get_batch(ids, starts, block_size, device=None):
    """(x, y): windows of the text at starts, y shifted by one character."""
    x = torch.tensor([ids[s:s + block_size] for s in starts], dtype=torch.int64, device=device)
    y = torch.tensor([ids[s + 1:s + 1 + block_size] for s in starts], dtype=torch.int64, device=device)
    return x, y


def make_optimizer(model, lr=3e-3):
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)


def train(model, text, steps=300, batch_size=16, lr=3e-3, seed=0, every=10, progress=None):
    """Train on random windows of text for `steps` AdamW steps. Every `every` steps (and at the
    last) progress(step, mean_loss) gets the mean loss of those steps: one readback each time,
    not one per step. Returns the history, a list of (step, mean_loss)."""
    device = next(model.parameters()).device
    ids = encode(model.vocab, text)
    rng = random.Random(seed)
    opt = make_optimizer(model, lr)
    history, total, count = [], 0.0, 0
    model.train()
    for step in range(1, steps + 1):
        x, y = get_batch(ids, batch_starts(rng, len(ids), model.block_size, batch_size),
                         model.block_size, device)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total, count = total + loss.detach(), count + 1
        if step % every == 0 or step == steps:
            mean = float(total.item()) / count
            history.append((step, mean))
            if progress is not None:
                progress(step, mean)
            total, count = 0.0, 0
    return history


def sample(model, prompt, n, temperature=1.0, generator=None):
    """n characters following prompt (the prompt not included). temperature <= 0 is greedy
    (argmax at each step); otherwise torch.multinomial draws from softmax(logits / temperature)."""
    device = next(model.parameters()).device
    ids = encode(model.vocab, prompt or "\n")
    start = len(ids)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(n):
            ctx = torch.tensor([ids[-model.block_size:]], dtype=torch.int64, device=device)
            logits = model(ctx)[0][0, -1]
            if temperature <= 0:
                nxt = logits.argmax()
            else:
                nxt = torch.multinomial(F.softmax(logits / temperature, dim=-1), 1, generator=generator)
            ids.append(int(nxt.item()))
    model.train(was_training)
    return decode(model.vocab, ids[start:])


def save_bytes(model):
    """The model as the bytes of a torch.save file: {format, config, vocab, state_dict}.
    Plain containers and tensors only, so torch.load(..., weights_only=True) reads it."""
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "config": dict(model.config), "vocab": model.vocab,
                "state_dict": model.state_dict()}, buf)
    return buf.getvalue()


def load_bytes(data, device=None):
    """A GPT from save_bytes' bytes (or a file PyTorch wrote the same way), on device."""
    ckpt = torch.load(io.BytesIO(bytes(data)), map_location=device, weights_only=True)
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"not a character-GPT checkpoint (expected format {FORMAT!r})")
    model = GPT(ckpt["vocab"], **ckpt["config"])
    if device is not None:
        model = model.to(device)
    model.load_state_dict(ckpt["state_dict"])
    return model
