"""Real PyTorch model code, unchanged, on torchweb: nanoGPT's model.py and pytorch/examples'
word_language_model/model.py (tests/models/) are executed twice, once with `torch` bound to
torchweb and once to PyTorch; the two models share weights through state_dict and must agree on
outputs, loss, gradients and a few training steps."""

import os

import pytest
import torch

import torchweb as tw
from model_files import load_file

MODELS = os.path.join(os.path.dirname(__file__), "models")


def _load_model_file(lib, name="nanogpt_model.py"):
    """Execute an unchanged model file with `import torch` resolving to lib (torchweb or torch)."""
    return load_file(os.path.join(MODELS, name), lib)


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


# -- pytorch/examples word_language_model ---------------------------------------------------------
def _to_torch(t):
    return torch.tensor(t.tolist())


def _same_weights(ours, theirs):
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict())
    theirs.load_state_dict({k: _to_torch(v) for k, v in sd.items()})


def _tokens(seed, t=7, b=3, vocab=40):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (t, b), generator=g), torch.randint(0, vocab, (t * b,), generator=g)


def _repackage(h):
    return h.detach() if hasattr(h, "detach") else tuple(_repackage(v) for v in h)


def _train_rnn(mod, lib, model, device, steps=3):
    """pytorch/examples word_language_model/main.py's train(): hidden state carried across
    batches, clip_grad_norm_, a manual SGD update on p.data."""
    hidden = model.init_hidden(3)
    losses = []
    for step in range(steps):
        data, targets = _tokens(step)
        data = lib.tensor(data.tolist(), device=device)
        targets = lib.tensor(targets.tolist(), device=device)
        model.zero_grad()
        hidden = _repackage(hidden)
        output, hidden = model(data, hidden)
        loss = lib.nn.functional.nll_loss(output, targets)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-20.0)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("rnn_type,tied", [("LSTM", False), ("GRU", True), ("RNN_TANH", False),
                                           ("RNN_RELU", False)])
def test_word_language_model_rnn_trains_like_pytorch(rnn_type, tied, device):
    ours_mod, theirs_mod = _load_model_file(tw, "word_language_model.py"), _load_model_file(torch, "word_language_model.py")
    tw.manual_seed(0)
    nhid = 12 if tied else 10
    ours = ours_mod.RNNModel(rnn_type, 40, 12, nhid, 2, dropout=0.0, tie_weights=tied)
    theirs = theirs_mod.RNNModel(rnn_type, 40, 12, nhid, 2, dropout=0.0, tie_weights=tied)
    _same_weights(ours, theirs)
    ours.to(device)
    got = _train_rnn(ours_mod, tw, ours, device)
    want = _train_rnn(theirs_mod, torch, theirs, "cpu")
    assert got == pytest.approx(want, rel=1e-4, abs=1e-5)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert torch.allclose(_to_torch(p), q.detach(), atol=1e-4, rtol=1e-3), name


def test_word_language_model_transformer_matches_pytorch(device):
    ours_mod, theirs_mod = _load_model_file(tw, "word_language_model.py"), _load_model_file(torch, "word_language_model.py")
    tw.manual_seed(0)
    ours = ours_mod.TransformerModel(40, 16, 2, 24, 2, dropout=0.0)
    theirs = theirs_mod.TransformerModel(40, 16, 2, 24, 2, dropout=0.0)
    _same_weights(ours, theirs)
    ours.to(device)
    ours.eval()     # nn.Transformer's own layers keep dropout=0.1: compare without it
    theirs.eval()
    for has_mask in (True, False):
        data, targets = _tokens(1)
        out = ours(tw.tensor(data.tolist(), device=device), has_mask=has_mask)
        want = theirs(data, has_mask=has_mask)
        assert torch.allclose(_to_torch(out), want, atol=5e-5, rtol=1e-4)
    loss = tw.nn.functional.nll_loss(out.view(-1, 40), tw.tensor(targets.tolist(), device=device))
    t_loss = torch.nn.functional.nll_loss(want.view(-1, 40), targets)
    loss.backward()
    t_loss.backward()
    ours_grads = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        if p.grad is None:
            assert ours_grads[name].grad is None, name
            continue
        assert torch.allclose(_to_torch(ours_grads[name].grad), p.grad, atol=5e-5, rtol=1e-3), name
