# A long run (issue 22): the GPT demo's model (site/demos/chargpt/model.py, made small) trained
# with AdamW, eagerly and under torch.compile, must keep the GPU bytes, buffers, bind groups,
# Pyodide's proxies and the heaps flat between the snapshot after warm-up and the one at the end
# (tests/browser/soak_stats.py). CI runs soak_stats.STEPS steps; bench/soak_page.py 1000+.
# modules: tests/browser/soak_stats.py site/demos/chargpt/model.py
import random

import torch

import model as chargpt
import soak_stats

TEXT = "shall i compare thee to a summer's day? thou art more lovely and more temperate.\n" * 4
BLOCK, BATCH = 16, 4
VOCAB = chargpt.make_vocab(TEXT)
IDS = chargpt.encode(VOCAB, TEXT)


def make_model(vocab):
    return soak_stats.formula_weights(chargpt.GPT(vocab, block_size=BLOCK, n_layer=1, n_head=2, n_embd=32), 0.13, 0.2)


def make_step(mode):
    model = make_model(VOCAB)
    opt = chargpt.make_optimizer(model, lr=3e-3)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        return loss

    return torch.compile(step, backend="eager") if mode == "compiled" else step


def batches():
    rng = random.Random(0)   # Python's own: the same windows on both sides
    return lambda i: chargpt.get_batch(IDS, chargpt.batch_starts(rng, len(IDS), BLOCK, BATCH), BLOCK)


soak_stats.start()
soak_runs = {}   # the figures, read by bench/soak_page.py
result = {mode: soak_stats.soak(f"gpt {mode}", make_step(mode), batches(), soak_runs, learns=0.6)
          for mode in ("eager", "compiled")}
