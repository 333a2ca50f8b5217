"""Seeded inputs and expected results of the browser suite, made with PyTorch on the CPU (the
project's oracle) and written as raw little-endian files plus a manifest the page reads.

Every library in the page gets the same inputs (and, for the training steps, the same initial
weights); a library's result that differs from the expected one is reported "wrong", not timed."""

import contextlib
import io
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

# Sizes: the issue's, and tiny ones for --smoke (CI). The GPT is a small config on purpose:
# SwiftShader is a CPU, and nanoGPT's 6x384 would take minutes a step there.
FULL = dict(chain_n=1024, chain_ops=200, matmuls=(512, 1024), readback_n=1 << 20,
            mlp=(784, 256, 10, 64),
            gpt=dict(n_layer=2, n_head=2, n_embd=64, block_size=32, vocab_size=65, batch=4),
            lm=dict(config=dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=128), prompt=32, new=16))
# On a real GPU (bench/gpu: the browser path in node on Dawn): nanoGPT's shape and the issue's
# 1024/4096 matmuls
GPU = dict(chain_n=1024, chain_ops=200, matmuls=(1024, 4096), readback_n=1 << 20,
           mlp=(784, 256, 10, 64),
           gpt=dict(n_layer=6, n_head=6, n_embd=384, block_size=256, vocab_size=65, batch=16),
           lm=dict(config=dict(), prompt=32, new=128))   # GPT2Config(): GPT-2 124M's shape
SMOKE = dict(chain_n=64, chain_ops=20, matmuls=(32, 64), readback_n=4096,
             mlp=(64, 32, 10, 8),
             gpt=dict(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=65, batch=2),
            lm=dict(config=dict(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=32), prompt=8, new=4))
SIZES = {"full": FULL, "smoke": SMOKE, "gpu": GPU}
TRAIN_REPS = 20     # timed training steps (other workloads: the page's reps, 5)
CHECKED_STEPS = 3    # training: the losses of the first steps are compared, then the timed steps go on
# Generation (issue 24): torchweb only (random GPT-2 weights made on the GPU), batch 1, greedy
LM_VARIANTS = ("float32", "int8-weight", "bf16-weight", "f16-weight")
MLP_LR, GPT_LR, GPT_WD, GPT_BETAS = 1e-3, 6e-4, 0.1, (0.9, 0.95)


def gpt_name(g):
    return f"gpt_{g['n_layer']}L_{g['n_embd']}_T{g['block_size']}_B{g['batch']}_adamw"


def workloads(sizes):
    """(name, kind, params) of each workload, in the order the page runs them."""
    n, ops, rn = sizes["chain_n"], sizes["chain_ops"], sizes["readback_n"]
    i, h, o, b = sizes["mlp"]
    g = sizes["gpt"]
    return ([(f"chain{ops}_{n}", "chain", {"n": n, "ops": ops})] +
            [(f"matmul_{m}", "matmul", {"m": m}) for m in sizes["matmuls"]] +
            [(f"readback_{rn}_buffer", "readback", {"n": rn}), (f"readback_{rn}_list", "readback_list", {"n": rn}),
             (f"mlp_{i}_{h}_{o}_b{b}_adam", "mlp", {"sizes": [i, h, o, b], "lr": MLP_LR}),
             (gpt_name(g), "gpt", {"gpt": {**g, "lr": GPT_LR, "weight_decay": GPT_WD, "betas": GPT_BETAS}})] +
            [(lm_name(sizes["lm"], v), "lm", {"lm": sizes["lm"], "variant": v}) for v in LM_VARIANTS])


def lm_name(lm, variant):
    c = lm["config"]
    shape = f"{c['n_layer']}L_{c['n_embd']}" if c else "124m"
    return f"lm_gpt2_{shape}_p{lm['prompt']}_n{lm['new']}_{variant}"


def _gpt_module():
    sys.path.insert(0, os.path.join(REPO, "tests"))
    from model_files import load_file
    return load_file(os.path.join(REPO, "tests", "models", "nanogpt_model.py"), torch)


def make(out_dir, smoke, profile=None):
    """Write out_dir/data/*.bin and out_dir/manifest.json; returns the manifest. profile: a
    key of SIZES (default: smoke or full)."""
    sizes = SIZES[profile or ("smoke" if smoke else "full")]
    data_dir = os.path.join(out_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    os.makedirs(os.path.join(out_dir, "py"), exist_ok=True)
    arrays, expected = {}, {}

    def put(name, t):
        t = t.detach().contiguous()
        kind = {torch.float32: "f32", torch.int32: "i32"}[t.dtype]
        with open(os.path.join(data_dir, name + ".bin"), "wb") as f:
            f.write(t.numpy().tobytes())
        arrays[name] = {"file": f"data/{name}.bin", "dtype": kind, "shape": list(t.shape)}

    g = torch.Generator().manual_seed(1234)
    names = [w[0] for w in workloads(sizes) if w[1] != "lm"]

    # (a) the chain: y = y * 1.0001 + 0.0001, ops/2 times; one readback of all n values
    n, ops = sizes["chain_n"], sizes["chain_ops"]
    x = torch.randn(n, generator=g)
    put("chain_x", x)
    y = x.clone()
    for _ in range(ops // 2):
        y = y * 1.0001 + 0.0001
    put("chain_y", y)
    expected[names[0]] = {"array": "chain_y", "rtol": 1e-5, "atol": 1e-5}

    # (b) matmuls with readback of the product
    for m in sizes["matmuls"]:
        a, bm = torch.randn(m, m, generator=g), torch.randn(m, m, generator=g)
        put(f"mm{m}_a", a)
        put(f"mm{m}_b", bm)
        put(f"mm{m}_c", a @ bm)
        expected[f"matmul_{m}"] = {"array": f"mm{m}_c", "rtol": 1e-3, "atol": 1e-3 * m ** 0.5}

    # (c) readback: rep r reads a fresh x + r (a new GPU tensor each time, so no library can
    # answer from a CPU copy of an earlier read); the page checks x + r itself
    rn = sizes["readback_n"]
    put("rb_x", torch.randn(rn, generator=g))
    expected[names[-4]] = expected[names[-3]] = {"array": "rb_x", "plus_rep": True, "rtol": 1e-6, "atol": 1e-6}

    # (d1) MLP 784-256-10, Adam, cross entropy: the first CHECKED_STEPS losses
    i, h, o, b = sizes["mlp"]
    torch.manual_seed(1)
    mlp = torch.nn.Sequential(torch.nn.Linear(i, h), torch.nn.ReLU(), torch.nn.Linear(h, o))
    for k, v in mlp.state_dict().items():
        put("mlp_" + k.replace(".", "_"), v)
    xb, yb = torch.randn(b, i, generator=g), torch.randint(0, o, (b,), generator=g, dtype=torch.int32)
    put("mlp_x", xb)
    put("mlp_y", yb)
    put("mlp_onehot", torch.nn.functional.one_hot(yb.long(), o).float())
    opt = torch.optim.Adam(mlp.parameters(), lr=MLP_LR)
    losses = []
    for _ in range(CHECKED_STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(mlp(xb), yb.long())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    expected[names[-2]] = {"losses": losses, "rtol": 2e-3, "atol": 2e-3}

    # (d2) nanoGPT (tests/models/nanogpt_model.py) in a small config, AdamW as nanoGPT sets it up
    gs = sizes["gpt"]
    G = _gpt_module()
    torch.manual_seed(2)
    cfg = G.GPTConfig(block_size=gs["block_size"], vocab_size=gs["vocab_size"], n_layer=gs["n_layer"],
                      n_head=gs["n_head"], n_embd=gs["n_embd"], dropout=0.0, bias=False)
    with contextlib.redirect_stdout(io.StringIO()):   # nanoGPT prints its parameter count
        model = G.GPT(cfg)
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}   # tied to wte
    for k, v in state.items():
        put("gpt_" + k, v)
    idx = torch.randint(0, gs["vocab_size"], (gs["batch"], gs["block_size"]), generator=g, dtype=torch.int32)
    tgt = torch.randint(0, gs["vocab_size"], (gs["batch"], gs["block_size"]), generator=g, dtype=torch.int32)
    put("gpt_idx", idx)
    put("gpt_tgt", tgt)
    with contextlib.redirect_stdout(io.StringIO()):   # nanoGPT prints its parameter groups
        opt = model.configure_optimizers(GPT_WD, GPT_LR, GPT_BETAS, "cpu")
    losses = []
    for _ in range(CHECKED_STEPS):
        _, loss = model(idx.long(), tgt.long())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    expected[names[-1]] = {"losses": losses, "rtol": 2e-3, "atol": 2e-3}

    # The Python files the page writes into Pyodide's file system, copied next to the page
    py_files = []
    for src in (os.path.join(HERE, "torchweb_bench.py"), os.path.join(REPO, "tests", "model_files.py"),
                os.path.join(REPO, "tests", "models", "nanogpt_model.py")):
        shutil.copy2(src, os.path.join(out_dir, "py"))
        py_files.append("build/py/" + os.path.basename(src))
    wl = []
    for name, kind, params in workloads(sizes):
        if kind == "gpt":
            params["gpt"]["params"] = list(state)
        # generation: the ids checked in range and the same each run (torchweb_bench checks eager = compiled)
        expect = expected.get(name) or {"tokens": sizes["lm"]["new"],
                                        "vocab": sizes["lm"]["config"].get("vocab_size", 50257)}   # GPT2Config()'s
        w = {"name": name, "kind": kind, "params": params, "expect": expect}
        if kind == "lm":
            w["warm"] = 1
        if kind in ("mlp", "gpt"):
            w["warm"] = CHECKED_STEPS
            # more timed steps: on a real GPU the first few after warm-up run 2-3x slower (an H200
            # under Dawn: 68, 68, 48, then 19 ms a compiled step in session 30; 52, 44, 40, 36, 36,
            # 36, 22, then 15 in session 31), and a training loop lives in the steady state the
            # median of 20 shows
            w["reps"] = TRAIN_REPS
        wl.append(w)
    manifest = {"smoke": smoke, "profile": profile or ("smoke" if smoke else "full"), "sizes": sizes, "workloads": wl, "python_files": py_files,
                "arrays": arrays, "torch_reference": torch.__version__}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest
