"""torchweb's side of the browser suite, run in Pyodide inside the bench page (runPythonAsync, so
`.tolist()`, `.item()` and `memoryview(t)` block on the GPU through JSPI). Written as PyTorch code.

The page calls `run_workload(kind, params, data, warm, reps)`: it returns the outputs of the warm-up
repetitions (checked by the page against PyTorch-CPU's results) and the times of the timed ones."""

import array
import time

import torchweb as torch

DEV = "webgpu"


def _floats(js_array):
    a = array.array("f")
    a.frombytes(js_array.to_bytes())
    return a


def _ints(js_array):
    a = array.array("i")
    a.frombytes(js_array.to_bytes())
    return a


def _tensor(js_array, shape, dtype=None):
    vals = _ints(js_array).tolist() if dtype is torch.int64 else _floats(js_array).tolist()
    return torch.tensor(vals, dtype=dtype, device=DEV).reshape(shape)


def readback_buffer(t):
    """The fast readback: `memoryview(t)` (Tensor.__buffer__, Python 3.12+), raw float32 bytes."""
    return memoryview(t)


def _out_bytes(out):
    # What the page checks: float32 bytes (a memoryview or a list of floats), or a loss number
    if isinstance(out, float):
        return out
    if isinstance(out, memoryview):
        return out.cast("B").tobytes()
    return array.array("f", out).tobytes()


def _maybe_compile(fn, compiled):
    # torch.compile as a PyTorch user writes it: the step without its readback (a readback
    # inside cannot be captured); the first calls run eagerly, later ones replay.
    return torch.compile(fn) if compiled else fn


def _chain(p, d, compiled=False):
    x = _tensor(d["chain_x"], [p["n"]])

    def chain(y):
        for _ in range(p["ops"] // 2):
            y = y * 1.0001 + 0.0001
        return y
    step = _maybe_compile(chain, compiled)

    def run(rep):
        t0 = time.perf_counter()
        y = step(x)
        # the overhead target: Python time to record one op (before the readback)
        _RECORD_US.append((time.perf_counter() - t0) * 1e6 / p["ops"])
        return readback_buffer(y)
    return None, run, step


def _matmul(p, d):
    m = p["m"]
    a, b = _tensor(d[f"mm{m}_a"], [m, m]), _tensor(d[f"mm{m}_b"], [m, m])

    def run(rep):
        return readback_buffer(a @ b)
    return None, run, None


def _readback(p, d, as_list):
    x = _tensor(d["rb_x"], [p["n"]])
    held = {}

    def prepare(rep):   # a fresh GPU tensor each time, computed before the clock starts
        held["y"] = x + float(rep)
        torch.webgpu.synchronize()

    def run(rep):
        return held["y"].tolist() if as_list else readback_buffer(held["y"])
    return prepare, run, None


def _mlp(p, d, compiled=False):
    i, h, o, b = p["sizes"]
    nn = torch.nn
    model = nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o)).to(DEV)
    names = {"0.weight": [h, i], "0.bias": [h], "2.weight": [o, h], "2.bias": [o]}
    model.load_state_dict({k: _tensor(d["mlp_" + k.replace(".", "_")], s) for k, s in names.items()})
    opt = torch.optim.Adam(model.parameters(), lr=p["lr"])
    x, y = _tensor(d["mlp_x"], [b, i]), _tensor(d["mlp_y"], [b], torch.int64)

    def train_step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    step = _maybe_compile(train_step, compiled)

    def run(rep):
        return step(x, y).item()
    return None, run, step


def _gpt(p, d, compiled=False):
    from model_files import load_file   # tests/model_files.py, copied next to the model by run.py
    G = load_file("/home/pyodide/nanogpt_model.py", torch)
    g = p["gpt"]
    cfg = G.GPTConfig(block_size=g["block_size"], vocab_size=g["vocab_size"], n_layer=g["n_layer"],
                      n_head=g["n_head"], n_embd=g["n_embd"], dropout=0.0, bias=False)
    model = G.GPT(cfg).to(DEV)
    state = {k: _tensor(d["gpt_" + k], p["shapes"]["gpt_" + k]) for k in g["params"]}
    state["lm_head.weight"] = state["transformer.wte.weight"]   # tied, as nanoGPT ties them
    model.load_state_dict(state)
    opt = model.configure_optimizers(g["weight_decay"], g["lr"], tuple(g["betas"]), "cpu")
    bt = [g["batch"], g["block_size"]]
    idx, tgt = _tensor(d["gpt_idx"], bt, torch.int64), _tensor(d["gpt_tgt"], bt, torch.int64)

    def train_step(idx, tgt):
        _, loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    step = _maybe_compile(train_step, compiled)

    def run(rep):
        return step(idx, tgt).item()
    return None, run, step


MAKERS = {"chain": _chain, "matmul": _matmul, "readback": lambda p, d: _readback(p, d, False),
          "readback_list": lambda p, d: _readback(p, d, True), "mlp": _mlp, "gpt": _gpt,
          "chain_compiled": lambda p, d: _chain(p, d, True), "mlp_compiled": lambda p, d: _mlp(p, d, True),
          "gpt_compiled": lambda p, d: _gpt(p, d, True)}


_RECORD_US = []   # per timed chain repetition: microseconds of Python per op before the readback


def run_workload(kind, params, data, warm, reps):
    params, data = params.to_py(), data.as_object_map()
    _RECORD_US.clear()
    prepare, run, step = MAKERS[kind](params, data)
    outputs, times = [], []
    for rep in range(warm + reps):
        if prepare:
            prepare(rep)
        t0 = time.perf_counter()
        out = run(rep)
        dt = time.perf_counter() - t0
        if rep < warm:
            outputs.append(_out_bytes(out))
        else:
            times.append(dt * 1000.0)
    res = {"outputs": outputs, "times_ms": times}
    timed = sorted(_RECORD_US[warm:])
    if timed:
        res["note"] = (f"recording: {timed[len(timed) // 2]:.1f} us an op (median; min {timed[0]:.1f}), "
                       f"Python time before the readback")
    stats = getattr(step, "compile_stats", None)
    if stats is not None:   # how many calls replayed, and why any did not
        res["compile_stats"] = {k: (list(map(str, v)) if k == "reasons" else v) for k, v in stats.items()}
    return res
