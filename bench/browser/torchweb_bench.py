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


def _python_floor(p, d):
    """readback_list's Python floor (peers/floor.mjs asks for it): the same 4 MB of float32 bytes,
    already in Python (read back before the clock, as readback_list's tensor is computed before
    it), into a list of floats: memoryview.cast('f').tolist(). A list of a million Python floats
    cannot cost less."""
    x = _tensor(d["rb_x"], [p["n"]])
    held = {}

    def prepare(rep):
        held["raw"] = memoryview(x + float(rep)).cast("B")

    def run(rep):
        return held["raw"].cast("f").tolist()
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


class _GenerateStats:
    """The compile_stats of generate()'s compiled decode step (made on the first call)."""

    def __init__(self, model):
        self.model = model

    @property
    def compile_stats(self):
        from torchweb.models import generation
        step = generation._compiled.get(self.model)
        return None if step is None else step.compile_stats


_LM = {}        # the one model held: (config, variant) -> model, shared by the eager and compiled runs
_LM_IDS = {}    # (config, variant), compiled -> the first run's generated ids (eager and compiled must agree)
_LM_MS = []     # per repetition: (decode ms a token, prefill ms), timed by generate's callback


def _lm_model(p):
    """GPT-2 (torchweb.models, HF layout) with random weights initialised on the GPU (no Python
    loop over values), then the weight variant: quantize_ as torchao's API reads."""
    from torchweb.ao.quantization import bfloat16_weight_only, float16_weight_only, int8_weight_only, quantize_
    from torchweb.models import GPT2Config, GPT2LMHeadModel
    key = (repr(sorted(p["lm"]["config"].items())), p["variant"])
    if key not in _LM:
        for old in _LM.values():
            old.free_cache()
        _LM.clear()
        torch.manual_seed(0)
        with torch.device(DEV):
            model = GPT2LMHeadModel(GPT2Config(**p["lm"]["config"])).eval()
            # GPT-2's init (std 0.02) makes a random model repeat one token; wider weights give
            # varied ids, so the eager = compiled check below compares something
            with torch.no_grad():
                for w in model.parameters():
                    if w.dim() == 2:
                        w.normal_(0.0, 0.2)
        if p["variant"] == "int8-weight":
            quantize_(model, int8_weight_only())
        elif p["variant"] == "bf16-weight":
            quantize_(model, bfloat16_weight_only())
        elif p["variant"] == "f16-weight":     # (no shader-f16 needed: Dawn on NVIDIA has none)
            quantize_(model, float16_weight_only())
        _LM[key] = model
    return key, _LM[key]


def _lm(p, d, compiled=False):
    from torchweb.models import generate
    key, model = _lm_model(p)
    lm = p["lm"]
    vocab = model.config.vocab_size
    prompt = torch.tensor([[(7 * i + 3) % vocab for i in range(lm["prompt"])]], device=DEV)

    def run(rep):
        stamps = []
        t0 = time.perf_counter()
        out = generate(model, prompt, lm["new"], greedy=True, compile=compiled,
                       callback=lambda t: stamps.append(time.perf_counter()))
        prefill, decode = stamps[0] - t0, (stamps[-1] - stamps[0]) / max(1, len(stamps) - 1)
        _LM_MS.append((decode * 1e3, prefill * 1e3))
        ids = out[0, lm["prompt"]:].tolist()
        if rep == 0:
            _LM_IDS[key, compiled] = ids
        return ids
    return None, run, _GenerateStats(model)


def _lm_report(key, compiled, warm, res):
    """Tokens/s and prefill in the note; eager and compiled must generate the same ids in float32
    (where weights are rounded, a near-tie may flip: noted, not failed)."""
    decode = sorted(ms for ms, _ in _LM_MS[warm:])
    prefill = sorted(pf for _, pf in _LM_MS[warm:])
    if decode:
        res["note"] = (f"{1000 / decode[len(decode) // 2]:.1f} tokens/s decode (median; best "
                       f"{1000 / decode[0]:.1f}), prefill {prefill[len(prefill) // 2]:.1f} ms; "
                       f"the time is ms a generated token")
    eager, got = _LM_IDS.get((key, False)), _LM_IDS.get((key, True))
    f32 = _LM_IDS.get(((key[0], "float32"), False))
    if not compiled and key[1] != "float32" and f32 is not None and eager is not None:   # rounding's effect
        first = next((i for i, (a, b) in enumerate(zip(eager, f32)) if a != b), 0)
        res["note"] = res.get("note", "") + "; ids " + (
            "= float32's" if eager == f32 else f"differ from float32's from new token {first}")
    if compiled and eager is not None and got is not None and got != eager:
        first = next((i for i, (a, b) in enumerate(zip(got, eager)) if a != b), min(len(got), len(eager)))
        why = f"compiled decode's ids differ from eager's (first at new token {first})"
        if key[1] == "float32":
            res["wrong"] = why
        else:
            res["note"] = res.get("note", "") + "; " + why


MAKERS = {"chain": _chain, "matmul": _matmul, "readback": lambda p, d: _readback(p, d, False),
          "readback_list": lambda p, d: _readback(p, d, True), "python_floor": _python_floor, "mlp": _mlp, "gpt": _gpt,
          "chain_compiled": lambda p, d: _chain(p, d, True), "mlp_compiled": lambda p, d: _mlp(p, d, True),
          "gpt_compiled": lambda p, d: _gpt(p, d, True), "lm": _lm, "lm_compiled": lambda p, d: _lm(p, d, True)}


_RECORD_US = []   # per timed chain repetition: microseconds of Python per op before the readback


def _gpu_pass_time(run, rep, res, calls=3):
    """GPU time a step's compute passes take (timestamp queries, where the adapter has them),
    from `calls` more steps: what the GPU spends, against the step's wall time."""
    from torchweb.backends.webgpu.runtime import get_runtime
    drv = get_runtime().driver
    if not getattr(drv, "gpu_timing", None) or not drv.gpu_timing(True):
        return
    try:
        t0 = time.perf_counter()
        for i in range(calls):
            run(rep + i)
        wall = (time.perf_counter() - t0) * 1000.0 / calls
        for _ in range(20):   # the timestamps land after the GPU is done: wait for them
            torch.webgpu.synchronize()
            st = drv.stats()
            if not st.get("gpuPending"):
                break
        ms = st["gpuPassMs"] / calls
        res["gpu_pass_ms"] = ms
        res["note"] = (res.get("note", "") + "; " if res.get("note") else "") + (
            f"GPU time in compute passes {ms:.2f} ms a step ({st['gpuPasses'] / calls:.0f} passes; timestamp queries), "
            f"JS encoding {st['encodeMs'] / calls:.2f} ms ({st['dispatches'] / calls:.0f} dispatches, "
            f"{st.get('submits', 0) / calls:.0f} submits, {st.get('reads', 0) / calls:.0f} readbacks) "
            f"of {wall:.2f} ms a step then")
    finally:
        drv.gpu_timing(False)


def run_workload(kind, params, data, warm, reps):
    params, data = params.to_py(), data.as_object_map()
    _RECORD_US.clear()
    _LM_MS.clear()
    prepare, run, step = MAKERS[kind](params, data)
    outputs, times = [], []
    for rep in range(warm + reps):
        # the last repetition's result is freed before the clock: freeing a list of a million
        # floats takes milliseconds, which is not the cost of this readback
        out = None
        if prepare:
            prepare(rep)
        t0 = time.perf_counter()
        out = run(rep)
        dt = time.perf_counter() - t0
        if rep < warm:
            outputs.append(_out_bytes(out))
        else:
            times.append(_LM_MS[rep][0] if _LM_MS else dt * 1000.0)
    res = {"outputs": outputs, "times_ms": times}
    if kind.startswith("lm"):
        _lm_report(_lm_model(params)[0], kind == "lm_compiled", warm, res)
    timed = sorted(_RECORD_US[warm:])
    if timed:
        res["note"] = (f"recording: {timed[len(timed) // 2]:.1f} us an op (median; min {timed[0]:.1f}), "
                       f"Python time before the readback")
    if kind.startswith(("gpt", "mlp")):
        _gpu_pass_time(run, warm + reps, res)
    stats = getattr(step, "compile_stats", None)
    if stats is not None:   # how many calls replayed, and why any did not
        res["compile_stats"] = {k: (list(map(str, v)) if k == "reasons" else v) for k, v in stats.items()}
    return res
