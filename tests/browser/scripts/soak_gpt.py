# A long run (issue 22): the GPT demo's model (site/demos/chargpt/model.py, made small) trained
# with AdamW, eagerly and under torch.compile, must keep the GPU bytes, buffers, bind groups,
# Pyodide's proxies and the heaps flat between the snapshot after warm-up and the one at the end
# (tests/browser/soak_stats.py). CI runs soak_stats.STEPS steps; bench/soak_page.py 1000+.
# modules: tests/browser/soak_stats.py site/demos/chargpt/model.py
import math
import random

import torch

import model as chargpt
import soak_stats

TEXT = "shall i compare thee to a summer's day? thou art more lovely and more temperate.\n" * 4
BLOCK, BATCH = 16, 4


def make_model(vocab):
    m = chargpt.GPT(vocab, block_size=BLOCK, n_layer=1, n_head=2, n_embd=32)
    with torch.no_grad():   # weights from a formula: the same on both sides
        for k, p in enumerate(m.parameters()):
            n = p.numel()
            p.copy_(torch.tensor([math.sin(0.13 * i + k) * 0.2 for i in range(n)]).reshape(p.shape))
    return m


def soak(mode):
    vocab = chargpt.make_vocab(TEXT)
    ids = chargpt.encode(vocab, TEXT)
    model = make_model(vocab)
    opt = chargpt.make_optimizer(model, lr=3e-3)
    rng = random.Random(0)   # Python's own: the same windows on both sides

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        return loss

    if mode == "compiled":
        step = torch.compile(step, backend="eager")
    losses, before = [], None
    for i in range(soak_stats.STEPS):
        if i == soak_stats.WARMUP:
            before = soak_stats.snapshot()
        loss = step(*chargpt.get_batch(ids, chargpt.batch_starts(rng, len(ids), BLOCK, BATCH), BLOCK))
        if i < 3:
            losses.append(loss.item())
    after = soak_stats.snapshot()   # (before the last loss is read: see soak_stats.snapshot)
    losses.append(loss.item())
    steps = soak_stats.STEPS - soak_stats.WARMUP
    print(soak_stats.line(f"gpt {mode}", before, after, steps))
    soak_runs[f"gpt {mode}"] = {"steps": steps, "before": before, "after": after,
                                  "compile": dict(getattr(step, "compile_stats", {}))}
    return {"losses": losses[:3], "learned": losses[-1] < 0.6 * losses[0],
            "grew": soak_stats.grew(before, after, steps)}


soak_stats.start()
soak_runs = {}   # the figures, read by bench/soak_page.py
result = {mode: soak(mode) for mode in ("eager", "compiled")}
