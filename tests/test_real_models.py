"""Real PyTorch model code, unchanged, on torchweb: nanoGPT's model.py (tests/models/) is executed
twice, once with `torch` bound to torchweb and once to PyTorch; the two GPTs share weights through
state_dict and must agree on logits, loss, gradients and a few AdamW steps."""

import os
import sys
import types

import pytest
import torch

import torchweb as tw

MODEL = os.path.join(os.path.dirname(__file__), "models", "nanogpt_model.py")
ALIASES = ("torch", "torch.nn", "torch.nn.functional")


def _load_model_file(lib):
    """Execute the unchanged model file with `import torch` resolving to lib (torchweb or torch)."""
    with open(MODEL) as f:
        source = f.read()
    module = types.ModuleType(f"nanogpt_{lib.__name__}")
    saved = {k: sys.modules.get(k) for k in ALIASES}
    sys.modules.update({"torch": lib, "torch.nn": lib.nn, "torch.nn.functional": lib.nn.functional})
    try:
        exec(compile(source, MODEL, "exec"), module.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module


@pytest.fixture(scope="module")
def gpts():
    ours, theirs = _load_model_file(tw), _load_model_file(torch)
    kw = dict(block_size=16, vocab_size=61, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True)
    tw.manual_seed(0)
    g_ours = ours.GPT(ours.GPTConfig(**kw))
    g_theirs = theirs.GPT(theirs.GPTConfig(**kw))
    return g_ours, g_theirs


def _copy_weights(g_ours, g_theirs):
    sd = g_ours.state_dict()
    assert list(sd) == list(g_theirs.state_dict())       # PyTorch's keys, tied weights included
    g_theirs.load_state_dict({k: torch.tensor(v.tolist()) for k, v in sd.items()})


def _batch(seed=0, b=3, t=16, vocab=61):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, vocab, (b, t), generator=g)
    targets = torch.randint(0, vocab, (b, t), generator=g)
    targets[0, :3] = -1                                     # nanoGPT's ignore_index
    return idx, targets


def test_gpt_init_follows_nanogpt(gpts):
    g_ours, _ = gpts
    # nanoGPT's _init_weights: normal(0, 0.02), c_proj scaled by 1/sqrt(2 * n_layer), zero biases
    w = g_ours.transformer.h[0].mlp.c_fc.weight
    assert abs(w.std().item() - 0.02) < 0.004
    c = g_ours.transformer.h[0].attn.c_proj.weight
    assert abs(c.std().item() - 0.02 / (2 * 2) ** 0.5) < 0.003
    assert g_ours.transformer.h[0].mlp.c_fc.bias.abs().max().item() == 0
    assert g_ours.lm_head.weight is g_ours.transformer.wte.weight
    assert g_ours.get_num_params() == gpts[1].get_num_params()


def test_gpt_forward_backward_match_pytorch(gpts, device):
    g_ours, g_theirs = gpts
    _copy_weights(g_ours, g_theirs)
    g_ours.to(device)
    idx, targets = _batch()
    logits, loss = g_ours(tw.tensor(idx.tolist(), device=device),
                          tw.tensor(targets.tolist(), device=device))
    t_logits, t_loss = g_theirs(idx, targets)
    assert torch.allclose(torch.tensor(logits.tolist()), t_logits, atol=2e-5, rtol=1e-4)
    assert abs(loss.item() - t_loss.item()) < 1e-4
    g_ours.zero_grad()
    g_theirs.zero_grad()
    loss.backward()
    t_loss.backward()
    ours_grads = dict(g_ours.named_parameters())
    for name, p in g_theirs.named_parameters():
        got = torch.tensor(ours_grads[name].grad.tolist())
        assert torch.allclose(got, p.grad, atol=2e-5, rtol=1e-3), name
    # inference path: logits of the last position only
    with tw.no_grad():
        last, none = g_ours(tw.tensor(idx.tolist(), device=device))
    assert none is None and last.shape == (3, 1, 61)
    g_ours.to("cpu")


def test_gpt_trains_like_pytorch_with_its_adamw(gpts, device):
    g_ours, g_theirs = gpts
    _copy_weights(g_ours, g_theirs)
    g_ours.to(device)
    opt = g_ours.configure_optimizers(0.1, 3e-3, (0.9, 0.95), device)
    t_opt = g_theirs.configure_optimizers(0.1, 3e-3, (0.9, 0.95), "cpu")
    curve, t_curve = [], []
    for step in range(5):
        idx, targets = _batch(seed=step)
        _, loss = g_ours(tw.tensor(idx.tolist(), device=device), tw.tensor(targets.tolist(), device=device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        curve.append(loss.item())
        _, t_loss = g_theirs(idx, targets)
        t_opt.zero_grad(set_to_none=True)
        t_loss.backward()
        t_opt.step()
        t_curve.append(t_loss.item())
    assert curve == pytest.approx(t_curve, abs=2e-4)
    idx = tw.zeros(1, 1, dtype=tw.long, device=device)
    out = g_ours.generate(idx, 5, temperature=1.0, top_k=10)
    assert out.shape == (1, 6) and out.dtype == tw.int64
    assert 0 <= out.min().item() and out.max().item() < 61
    g_ours.to("cpu")
