# A character-level LSTM (in the manner of pytorch/examples' word_language_model, on characters):
# it learns to continue a short text, then writes greedily. Plain PyTorch: nn.Embedding, nn.LSTM,
# nn.Linear, cross-entropy, Adam, gradient clipping. The weights start from Python's seeded
# `random`, so PyTorch prints the same losses.
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from playground import plot          # draws on the playground page
except ImportError:                      # elsewhere: no plot
    def plot(*args, **kwargs): pass

TEXT = ("the quick brown fox jumps over the lazy dog. "
        "the lazy dog sleeps in the sun. the quick fox runs. ")
chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in TEXT])
SEQ = 8


class CharModel(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx, state=None):
        out, state = self.rnn(self.embed(idx), state)
        return self.head(out), state


def same_start(model, seed=0):
    """Initial weights from Python's seeded `random` (the same on every library)."""
    rng = random.Random(seed)
    with torch.no_grad():
        for p in model.parameters():
            bound = 1 / math.sqrt(p.shape[-1])
            p.copy_(torch.tensor([rng.uniform(-bound, bound) for _ in range(p.numel())]).view(p.shape))


# every window of SEQ characters, as one batch: inputs and next characters
starts = list(range(0, len(TEXT) - SEQ - 1, 4))
x = torch.stack([data[s:s + SEQ] for s in starts])
y = torch.stack([data[s + 1:s + SEQ + 1] for s in starts])

model = CharModel(len(chars))
same_start(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
losses = []
for step in range(1, 61):
    logits, _ = model(x)
    loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    losses.append(loss.detach())
    if step % 10 == 0:
        curve = torch.stack(losses).tolist()
        plot(curve, title="cross-entropy per step")
        print(f"step {step}: loss {curve[-1]:.4f}")

# greedy continuation of a prompt
model.eval()
with torch.no_grad():
    prompt = "the quick"
    logits, state = model(torch.tensor([[stoi[c] for c in prompt]]))
    out = prompt
    for _ in range(30):
        nxt = int(logits[0, -1].argmax().item())
        out += chars[nxt]
        logits, state = model(torch.tensor([[nxt]]), state)
print("sample:", repr(out))
print(f"final loss: {losses[-1].item():.6f}")
