"""The "GPT" demo's model (site/demos/chargpt/model.py, issue 10), plain PyTorch code run unchanged
against torchweb (webgpu, lavapipe here) and against PyTorch (the oracle), with the same initial
weights (PyTorch's, copied over) and the same batches (drawn with Python's random):
logits and loss, a few AdamW steps of train(), greedy sampling, and checkpoints both ways
(save_bytes in one library, load_bytes in the other)."""

import os
import random

import pytest
import torch

import torchweb as tw
from model_files import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "site", "demos", "chargpt")
# smaller than the page's default (64 wide, context 64), two layers so blocks chain; lavapipe is a CPU
CONFIG = {"block_size": 32, "n_layer": 2, "n_head": 4, "n_embd": 32}
BATCH = 8


@pytest.fixture(scope="module")
def text():
    with open(os.path.join(DEMO, "text.txt")) as f:
        return f.read()


@pytest.fixture(scope="module")
def libs():
    if not tw.webgpu.is_available():
        pytest.fail("no WebGPU adapter: install mesa-vulkan-drivers (lavapipe) and wgpu")
    return load_file(os.path.join(DEMO, "model.py"), torch), load_file(os.path.join(DEMO, "model.py"), tw)


def _pair(libs, text, seed=0):
    """(PyTorch model, torchweb model on webgpu) with PyTorch's initial weights in both."""
    pt_mod, tw_mod = libs
    torch.manual_seed(seed)
    ref = pt_mod.GPT(pt_mod.make_vocab(text), **CONFIG)
    ours = tw_mod.GPT(tw_mod.make_vocab(text), **CONFIG).to("webgpu")
    ours.load_state_dict({k: tw.tensor(v.detach().numpy(), device="webgpu") for k, v in ref.state_dict().items()})
    return ref, ours


def _close(a, b, atol):
    a = a.detach().cpu().numpy()
    b = b.detach().numpy()
    assert a.shape == b.shape
    err = float(abs(a - b).max())
    assert err <= atol, f"max abs error {err} > {atol}"


def test_text_and_vocab(text, libs):
    pt_mod, _ = libs
    vocab = pt_mod.make_vocab(text)
    assert len(text) > 50_000 and text.startswith("From fairest creatures we desire increase,")
    assert vocab == "".join(sorted(set(text))) and len(vocab) == 61
    assert pt_mod.decode(vocab, pt_mod.encode(vocab, "Shall I compare thee")) == "Shall I compare thee"
    with pytest.raises(ValueError, match="not in the model's alphabet"):
        pt_mod.encode(vocab, "caf\u00e9")


def test_logits_and_loss_match(text, libs):
    pt_mod, tw_mod = libs
    ref, ours = _pair(libs, text)
    ids = pt_mod.encode(ref.vocab, text)
    starts = pt_mod.batch_starts(random.Random(1), len(ids), CONFIG["block_size"], BATCH)
    x, y = pt_mod.get_batch(ids, starts, CONFIG["block_size"])
    xw, yw = tw_mod.get_batch(ids, starts, CONFIG["block_size"], "webgpu")
    logits, loss = ref(x, y)
    logits_w, loss_w = ours(xw, yw)
    assert tuple(logits_w.shape) == (BATCH, CONFIG["block_size"], len(ref.vocab))
    _close(logits_w, logits, 1e-4)
    assert abs(loss_w.item() - loss.item()) < 1e-4
    # gradients of the loss, every parameter
    loss.backward()
    loss_w.backward()
    grads = dict(ours.named_parameters())
    for name, p in ref.named_parameters():
        _close(grads[name].grad, p.grad, 1e-4)


def test_adamw_steps_match(text, libs):
    pt_mod, tw_mod = libs
    ref, ours = _pair(libs, text)
    seen = []
    h_ref = pt_mod.train(ref, text, steps=4, batch_size=BATCH, lr=3e-3, seed=2, every=1)
    h_ours = tw_mod.train(ours, text, steps=4, batch_size=BATCH, lr=3e-3, seed=2, every=1,
                          progress=lambda step, loss: seen.append((step, loss)))
    assert seen == h_ours and [s for s, _ in h_ours] == [1, 2, 3, 4]
    for (s, a), (_, b) in zip(h_ours, h_ref):
        assert abs(a - b) < 1e-4, (h_ours, h_ref)
    assert h_ref[-1][1] < h_ref[0][1]
    # Adam divides by sqrt(v): a gradient near zero moves its weight by about lr whatever its
    # size, so float noise there shows as a few 1e-4 after 4 steps (1.4e-4 seen); a third of lr
    params = dict(ours.named_parameters())
    for name, p in ref.named_parameters():
        _close(params[name], p, 1e-3)
    # the same weights give the same greedy text
    assert tw_mod.sample(ours, "Shall I ", 12, temperature=0) == pt_mod.sample(ref, "Shall I ", 12, temperature=0)


def test_sampling(text, libs):
    _, tw_mod = libs
    _, ours = _pair(libs, text)
    g = tw.Generator(device="webgpu").manual_seed(5)
    s = tw_mod.sample(ours, "Shall I ", 20, temperature=1.0, generator=g)
    assert len(s) == 20 and set(s) <= set(text)
    g.manual_seed(5)
    assert tw_mod.sample(ours, "Shall I ", 20, temperature=1.0, generator=g) == s   # seeded: repeatable
    assert ours.training                                                            # mode restored


def test_checkpoints_both_ways(text, libs):
    pt_mod, tw_mod = libs
    ref, ours = _pair(libs, text, seed=3)
    # torchweb -> PyTorch: weights_only, the same class, keys, shapes and values
    data = tw_mod.save_bytes(ours)
    back = pt_mod.load_bytes(data)
    assert back.vocab == ref.vocab and back.config == CONFIG
    sd = back.state_dict()
    assert {k: tuple(v.shape) for k, v in sd.items()} == {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    for k, v in ref.state_dict().items():
        assert torch.equal(sd[k], v), k
    # PyTorch -> torchweb (webgpu): the same logits
    loaded = tw_mod.load_bytes(pt_mod.save_bytes(ref), "webgpu")
    assert next(loaded.parameters()).device.type == "webgpu"
    idx = [pt_mod.encode(ref.vocab, "Shall I compare thee")]
    _close(loaded(tw.tensor(idx, device="webgpu"))[0], ref(torch.tensor(idx))[0], 1e-4)
    with pytest.raises(ValueError, match="not a character-GPT checkpoint"):
        buf = __import__("io").BytesIO()
        torch.save({"state_dict": ref.state_dict()}, buf)
        tw_mod.load_bytes(buf.getvalue(), "webgpu")
