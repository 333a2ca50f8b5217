"""The benchmark workloads of issue 9, each written once against the PyTorch API so that the same
code times torchweb and PyTorch: `make(lib, device)` returns a callable doing one unit of work.

Sizes are the issue's; `smoke` shrinks them so that the scaffold runs in the test command."""

import collections
import os
import sys


def _kept(run, n):
    """run(), its last n results kept alive (n: the calls timed before each synchronize). A lazy
    library computes only what is used: torchweb defers a matmul (to store its epilogue), and a
    product dropped unread is never computed, so a loop of bare `a @ b` would time nothing."""
    kept = collections.deque(maxlen=n)
    return lambda: kept.append(run())


def _chain(lib, dev, n, ops):
    x = lib.randn(n, device=dev)

    def run():
        y = x
        for _ in range(ops // 2):
            y = y * 1.0001 + 0.0001
        return y.sum().item()     # one readback, as a program would
    return run


def _mlp_step(lib, dev, batch):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(batch, 784, device=dev)
    y = lib.randint(0, 10, (batch,), device=dev)

    def run():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return run


def _gpt_module(lib):
    tests = os.path.join(os.path.dirname(__file__), "..", "tests")
    sys.path.insert(0, tests)
    from model_files import load_file
    return load_file(os.path.join(tests, "models", "nanogpt_model.py"), lib)


# the browser suite's GPT (bench/browser/data.py FULL): SwiftShader-sized
BROWSER_GPT = dict(n_layer=2, n_head=2, n_embd=64, block_size=32, batch=4)


def _gpt_step(lib, dev, smoke, sizes=None):
    """sizes: n_layer, n_head, n_embd, block_size, batch (e.g. BROWSER_GPT) instead of the
    nanoGPT-shaped default."""
    g = _gpt_module(lib)
    cfg = dict(block_size=256, vocab_size=65, n_layer=6, n_head=6, n_embd=384, dropout=0.0, bias=False)
    b, t = 16, 256
    if smoke:
        cfg.update(block_size=16, n_layer=1, n_head=2, n_embd=16)
        b, t = 2, 16
    if sizes:
        cfg.update({k: v for k, v in sizes.items() if k != "batch"})
        b, t = sizes["batch"], sizes["block_size"]
    model = g.GPT(g.GPTConfig(**cfg)).to(dev)
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), "cuda" if dev == "cuda" else "cpu")
    idx = lib.randint(0, 65, (b, t), device=dev)
    tgt = lib.randint(0, 65, (b, t), device=dev)

    def run():
        _, loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return run


def _block_fwd_bwd(lib, dev, smoke):
    b, t, c, h = (2, 16, 16, 2) if smoke else (16, 256, 384, 6)
    layer = lib.nn.TransformerEncoderLayer(c, h, 4 * c, dropout=0.0, batch_first=True, norm_first=True).to(dev)
    x = lib.randn(b, t, c, device=dev, requires_grad=True)
    mask = lib.nn.Transformer.generate_square_subsequent_mask(t, device=dev)

    def run():
        out = layer(x, src_mask=mask, is_causal=True)
        out.sum().backward()
        return out
    return run


def _compiled(make):
    """The same workload with its step under lib.compile for torchweb (capture and replay);
    PyTorch runs it eagerly (the issue's bar: PyTorch CUDA eager)."""
    def build(lib, dev):
        fn = make(lib, dev)
        return lib.compile(fn) if lib.__name__.startswith("torchweb") else fn
    return build


def _chain_compiled(lib, dev, n, ops):
    x = lib.randn(n, device=dev)

    def chain(y):
        for _ in range(ops // 2):
            y = y * 1.0001 + 0.0001
        return y
    f = lib.compile(chain) if lib.__name__.startswith("torchweb") else chain
    return lambda: f(x).sum().item()


def cases(smoke):
    """(name, shape, flops or elements, make(lib, dev), inner calls per timing)."""
    big = 1 << (10 if smoke else 26)            # 64M floats
    n = 64 if smoke else 4096
    m = 64 if smoke else 1024
    sm = 64 if smoke else 4096
    bb, bt, bd = (4, 32, 16) if smoke else (96, 256, 64)       # attention-shaped batched product
    lr, lc, lo = (64, 32, 48) if smoke else (4096, 384, 1536)  # a transformer's MLP input
    return [
        ("chain200_f32_1024", (1024, 200), 200 * 1024, lambda lib, dev: _chain(lib, dev, 1024, 200), 10),
        # out=: every call really writes (a lazy library would skip a dead a + b)
        ("add_f32_64M", (big,), big, lambda lib, dev: (lambda a, b, c: (lambda: lib.add(a, b, out=c)))(
            lib.randn(big, device=dev), lib.randn(big, device=dev), lib.empty(big, device=dev)), 10),
        ("sum_f32_64M", (big,), big, lambda lib, dev: (lambda a: (lambda: a.sum()))(lib.randn(big, device=dev)), 10),
        ("rowsum_f32_8192x8192", (8192, 8192), 8192 * 8192, lambda lib, dev: (lambda a: (lambda: a.sum(1)))(
            lib.randn(*((64, 64) if smoke else (8192, 8192)), device=dev)), 10),
        ("softmax_f32_4096x4096", (sm, sm), sm * sm, lambda lib, dev: (lambda a: (lambda: a.softmax(-1)))(
            lib.randn(sm, sm, device=dev)), 10),
        ("matmul_f32_4096", (n, n, n), 2 * n ** 3, lambda lib, dev: (lambda a, b: _kept(lambda: a @ b, 10))(
            lib.randn(n, n, device=dev), lib.randn(n, n, device=dev)), 10),
        ("matmul_f32_1024", (m, m, m), 2 * m ** 3, lambda lib, dev: (lambda a, b: _kept(lambda: a @ b, 10))(
            lib.randn(m, m, device=dev), lib.randn(m, m, device=dev)), 10),
        ("bmm_96x256x64x256", (bb, bt, bd, bt), 2 * bb * bt * bd * bt,
         lambda lib, dev: (lambda a, b: _kept(lambda: a @ b, 10))(
             lib.randn(bb, bt, bd, device=dev), lib.randn(bb, bd, bt, device=dev)), 10),
        ("linear_4096x384_1536", (lr, lc, lo), 2 * lr * lc * lo,
         lambda lib, dev: (lambda x, w, bias: _kept(lambda: lib.nn.functional.linear(x, w, bias), 10))(
             lib.randn(lr, lc, device=dev), lib.randn(lo, lc, device=dev), lib.randn(lo, device=dev)), 10),
        ("mlp_784_256_10_adam_step_b64", (64, 784), 0, lambda lib, dev: _mlp_step(lib, dev, 64), 5),
        ("transformer_block_fwd_bwd_B16_T256_C384", (16, 256, 384), 0,
         lambda lib, dev: _block_fwd_bwd(lib, dev, smoke), 2),
        ("gpt_train_step_6L_384_T256_B16", (16, 256), 0, lambda lib, dev: _gpt_step(lib, dev, smoke), 1),
        ("compiled_chain200_f32_1024", (1024, 200), 200 * 1024, lambda lib, dev: _chain_compiled(lib, dev, 1024, 200), 10),
        ("compiled_mlp_784_256_10_adam_step_b64", (64, 784), 0, _compiled(lambda lib, dev: _mlp_step(lib, dev, 64)), 5),
        ("compiled_gpt_train_step_6L_384_T256_B16", (16, 256), 0, _compiled(lambda lib, dev: _gpt_step(lib, dev, smoke)), 1),
    ]

