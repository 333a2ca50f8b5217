"""What each corpus program is fed and how its own code is driven (tests/test_corpus.py):
deterministic batches, a small graph, replay-buffer transitions, configs at tiny sizes, and the
drivers that call a program's training code (train_iter, Trainer.run, finish_episode, ...)."""

import argparse
import math
import os

import torch

import torchweb as tw
from corpus_harness import load, to_ours


def _g(step):
    return torch.Generator().manual_seed(1000 + step)


_RANDN, _RANDINT, _RAND = torch.randn, torch.randint, torch.rand   # not SharedNoise's


def randn(*shape, step=0, scale=1.0):
    return _RANDN(*shape, generator=_g(step)) * scale


def rand(*shape, step=0):
    return _RAND(*shape, generator=_g(step))


def randint(high, *shape, step=0):
    return _RANDINT(0, high, shape, generator=_g(step))


def _floats(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _floats(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _floats(o)]
    return [out] if hasattr(out, "dtype") and out.dtype.is_floating_point else []


def default_loss(mod, lib, out, *batch):
    """A loss that reaches every output: the mean of each float output's squares, summed."""
    return sum(t.float().pow(2).mean() for t in _floats(out))


def cls_loss(mod, lib, out, *batch):
    """An image classifier's loss: cross-entropy against fixed labels."""
    labels = lib.tensor([(3 * i + 1) % out.shape[1] for i in range(out.shape[0])], device=out.device)
    return lib.nn.functional.cross_entropy(out, labels)


def run_forward(p, model, batch):
    return p.forward(model, *batch) if p.forward else model(*batch)


def _args(**kw):
    return argparse.Namespace(**kw)


# -- pytorch/examples ---------------------------------------------------------------------------
def to_lib(lib, t, device):
    return to_ours(t, device) if lib is tw else t


def graph(n=6, features=5, classes=3, normalize=True):
    """A small graph: node features, a symmetric adjacency with self loops (D^-1/2 A D^-1/2 when
    normalize), labels and train/validation masks."""
    a = torch.zeros(n, n)
    for i in range(n):
        a[i, i] = 1.0
        a[i, (i + 1) % n] = a[(i + 1) % n, i] = 1.0
    a[0, 3] = a[3, 0] = 1.0
    if normalize:
        d = a.sum(1).rsqrt()
        a = d[:, None] * a * d[None, :]
    mask = torch.tensor([True, True, False, True, False, True])
    return randn(n, features), a, randint(classes, n), mask, ~mask


def graph_train(mod, lib, model, device):
    """gcn/gat main.py's train_iter() for 3 epochs and test() (Adam, NLLLoss / CrossEntropyLoss)."""
    x, adj, y, m_train, m_val = to_lib(lib, graph(normalize="gcn" in mod.__name__), device)
    opt = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    criterion = lib.nn.NLLLoss()
    for epoch in range(3):
        mod.train_iter(epoch + 1, model, opt, criterion, (x, adj), y, m_train, m_val, print_every=1)
    return mod.test(model, criterion, (x, adj), y, m_val)


def policy_train(mod, lib, model, device):
    """reinforce.py/actor_critic.py: select_action() on fixed CartPole-like states, rewards, then
    finish_episode() (the policy-gradient update), for 2 episodes."""
    import numpy as np
    mod.policy = mod.model = model
    mod.optimizer = lib.optim.Adam(model.parameters(), lr=1e-2)
    mod.args = _args(gamma=0.99, log_interval=1)
    actions = []
    for episode in range(2):
        for t in range(4):
            state = np.array([math.sin(t + episode), 0.1 * t, math.cos(t), -0.2 * episode], dtype=np.float64)
            actions.append(mod.select_action(state))
            model.rewards.append(1.0 if t % 2 else 0.5)
        mod.finish_episode()
    return actions


def forward_forward_train(mod, lib, model, device):
    """mnist_forward_forward/main.py: Net.train(x_pos, x_neg) (each Layer's own Adam loop) and
    Net.predict, on 6 flattened images with their labels overlaid."""
    x, y = rand(6, 784), randint(10, 6)
    y_neg = (y + 3) % 10
    x, y, y_neg = to_lib(lib, (x, y, y_neg), device)
    x_pos, x_neg = mod.overlay_y_on_x(x, y), mod.overlay_y_on_x(x, y_neg)
    model.train(x_pos, x_neg)
    return model.predict(x), model.layers[0](x_pos)


class ForwardForwardNet:
    """Builds mnist_forward_forward's Net with the globals its __main__ would set."""
    def __call__(self, mod, lib):
        mod.args = _args(lr=0.03, threshold=2.0, epochs=3, log_interval=1)
        mod.device = "cpu"
        net = mod.Net([784, 16, 16])
        holder = lib.nn.Module()          # a module over the layers, so that state_dict covers them
        holder.layers = lib.nn.ModuleList(net.layers)
        holder.net = net
        return holder


def llama_args(mod):
    return mod.ModelArgs(dim=16, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=23, multiple_of=8,
                         max_seq_len=8)


def gpt_config(mod, vocab=17, block=8):
    c = mod.GPT.get_default_config()
    c.model_type, c.n_layer, c.n_head, c.n_embd = None, 2, 2, 16
    c.vocab_size, c.block_size = vocab, block
    c.embd_pdrop = c.resid_pdrop = c.attn_pdrop = 0.0
    return c


def mingpt_trainer(mod, lib, model, device):
    """minGPT's Trainer.run(): its DataLoader with a RandomSampler, AdamW from the model's
    configure_optimizers, grad-norm clipping, and an on_batch_end callback that stops after 3
    iterations. One-item dataset: every sampled index is the same in both libraries."""
    trainer_mod = load("mingpt_trainer.py", lib)
    idx, targets = randint(17, 8), randint(17, 8)

    class OneSequence(lib.utils.data.Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return to_lib(lib, idx, "cpu"), to_lib(lib, targets, "cpu")

    config = trainer_mod.Trainer.get_default_config()
    config.device, config.num_workers, config.max_iters, config.batch_size = device, 0, 3, 2
    config.learning_rate = 1e-2
    trainer = trainer_mod.Trainer(config, model, OneSequence())
    losses = []
    trainer.set_callback("on_batch_end", lambda t: losses.append(t.loss.item()))
    trainer.run()
    return losses


def whisper_dims(mod):
    return mod.ModelDimensions(n_mels=8, n_audio_ctx=6, n_audio_state=16, n_audio_head=2, n_audio_layer=2,
                               n_vocab=29, n_text_ctx=5, n_text_state=16, n_text_head=2, n_text_layer=2)


def whisper_loss(mod, lib, logits, mel, tokens):
    return lib.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 29), tokens[:, 1:].reshape(-1))


def graph_step(mod, lib, out, x, adj, y):
    """pygat/pygcn train.py's loss: nll_loss of the log-softmax output on the training nodes."""
    return lib.nn.functional.nll_loss(out[:4], y[:4])


def llama2c_args(mod):
    return mod.ModelArgs(dim=16, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=31, multiple_of=8,
                         max_seq_len=8, dropout=0.0)


def mamba_config(mod, **kw):
    return mod.MambaConfig(d_model=8, n_layers=2, d_state=4, d_conv=3, **kw)


def networks(**modules):
    """A module holding the program's networks, so that one state_dict covers them all."""
    def build(mod, lib):
        holder = lib.nn.Module()
        for name, make in modules.items():
            setattr(holder, name, make(mod))
        return holder
    return build


def _transitions(n, state_dim, action=lambda i: i % 2):
    import numpy as np
    out = []
    for i in range(n):
        s = np.array([math.sin(0.3 * i + k) for k in range(state_dim)], dtype=np.float32)
        s_prime = np.array([math.sin(0.3 * i + 0.3 + k) for k in range(state_dim)], dtype=np.float32)
        out.append((s, action(i), 0.01 * (i % 5), s_prime, 0.0 if i % 7 == 6 else 1.0))
    return out


def dqn_train(mod, lib, model, device):
    """minimalRL dqn.py: ReplayBuffer of fixed transitions, train() (10 minibatches of 32 sampled
    with Python's random, seeded alike), q_target synced by load_state_dict, sample_action."""
    import random
    random.seed(0)
    memory = mod.ReplayBuffer()
    for t in _transitions(64, 4):
        memory.put(t)
    model.q_target.load_state_dict(model.q.state_dict())
    optimizer = lib.optim.Adam(model.q.parameters(), lr=mod.learning_rate)
    mod.train(model.q, model.q_target, memory, optimizer)
    obs = lib.from_numpy(_transitions(1, 4)[0][0]).float().to(device)
    return [model.q.sample_action(obs, 0.3) for _ in range(5)]


def ddpg_train(mod, lib, model, device):
    """minimalRL ddpg.py: train() on sampled minibatches (critic, then actor), soft_update of both
    target networks, and the Ornstein-Uhlenbeck exploration noise added to the actor's action."""
    import random
    import numpy as np
    random.seed(0)
    np.random.seed(0)
    memory = mod.ReplayBuffer()
    for t in _transitions(40, 3, action=lambda i: math.sin(i)):
        memory.put((t[0], t[1], t[2], t[3], t[4] == 0.0))
    model.q_target.load_state_dict(model.q.state_dict())
    model.mu_target.load_state_dict(model.mu.state_dict())
    mu_optimizer = lib.optim.Adam(model.mu.parameters(), lr=mod.lr_mu)
    q_optimizer = lib.optim.Adam(model.q.parameters(), lr=mod.lr_q)
    noise = mod.OrnsteinUhlenbeckNoise(mu=np.zeros(1))
    for _ in range(3):
        mod.train(model.mu, model.mu_target, model.q, model.q_target, memory, q_optimizer, mu_optimizer)
        mod.soft_update(model.mu, model.mu_target)
        mod.soft_update(model.q, model.q_target)
    a = model.mu(lib.from_numpy(_transitions(1, 3)[0][0]).to(device))
    return a.item() + noise()[0]


def ppo_train(mod, lib, model, device):
    """minimalRL ppo.py: put_data() of a fixed horizon, then train_net() (GAE with numpy, the
    clipped surrogate objective, K_epoch Adam steps of its own optimizer)."""
    for i, (s, a, r, s_prime, done) in enumerate(_transitions(6, 4)):
        model.put_data((s, a, r, s_prime, 0.4 + 0.1 * (i % 3), done == 0.0))
    model.train_net()
    return model.pi(lib.from_numpy(_transitions(1, 4)[0][0]).to(device))


def ddp_series_trainer(mod, lib, model, device):
    """pytorch/examples ddp-tutorial-series single_gpu.py: its Trainer (_run_batch, _run_epoch,
    _save_checkpoint every epoch) for 2 epochs over 3 batches; the checkpoint file it writes is
    read back."""
    import tempfile
    x, y = randn(12, 20), randint(4, 12)
    data = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(*to_lib(lib, (x, y), "cpu")), batch_size=4)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            mod.Trainer(model, data, optimizer, device, save_every=1).train(2)
            return dict(lib.load("checkpoint.pt"))
        finally:
            os.chdir(cwd)


def time_sequence_train(mod, lib, model, device):
    """time_sequence_prediction/train.py's loop: the model in double precision, MSELoss, LBFGS
    with a closure for 2 steps, then a prediction 5 steps into the future."""
    t = torch.arange(12.0)
    data = torch.stack([torch.sin((t + 3 * k) / 4.0) for k in range(4)]).double()
    data = to_lib(lib, data, device)
    model.double()
    criterion = lib.nn.MSELoss()
    optimizer = lib.optim.LBFGS(model.parameters(), lr=0.8)
    for _ in range(2):
        def closure():
            optimizer.zero_grad()
            loss = criterion(model(data[:, :-1]), data[:, 1:])
            loss.backward()
            return loss
        optimizer.step(closure)
    with lib.no_grad():
        return model(data[:1, :-1], future=5)


def whisper_front_end(mod, lib, model, device):
    """whisper/audio.py: pad_or_trim and log_mel_spectrogram (Hann window, STFT, the mel filter
    bank from its assets, log10 and dynamic-range clamp) on 0.1 s of a two-tone signal."""
    t = torch.arange(1600.0) / mod.SAMPLE_RATE
    audio = to_lib(lib, 0.5 * torch.sin(2 * math.pi * 440 * t) + 0.2 * torch.sin(2 * math.pi * 1250 * t), device)
    audio = mod.pad_or_trim(audio, 1800)
    return mod.log_mel_spectrogram(audio, n_mels=80)


def char_rnn_train(mod, lib, model, device):
    """char-rnn.pytorch: the model stepped one character at a time over a batch of chunks with
    a summed CrossEntropyLoss and Adam (its train.py's loop, whose module runs argparse at import),
    then generate.py's generate(): priming, temperature, torch.multinomial, tensor indices into
    a string."""
    text = "When forty winters shall besiege thy brow, and dig deep trenches in thy beauty's field"
    chunks = [text[i:i + 9] for i in (0, 20, 41)]
    inp = lib.stack([mod.char_tensor(c[:-1]) for c in chunks]).to(device)
    target = lib.stack([mod.char_tensor(c[1:]) for c in chunks]).to(device)
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    criterion = lib.nn.CrossEntropyLoss()
    losses = []
    for _ in range(2):
        hidden = model.init_hidden(3)
        hidden = tuple(h.to(device) for h in hidden) if isinstance(hidden, tuple) else hidden.to(device)
        model.zero_grad()
        loss = 0
        for c in range(8):
            output, hidden = model(inp[:, c], hidden)
            loss += criterion(output.view(3, -1), target[:, c])
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / 8)
    return losses, mod.generate(model, "Wh", 6)
