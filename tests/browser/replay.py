# Replays the cases of cases.json (recorded from PyTorch by record_cases.py) with torchweb on
# the webgpu device, inside Pyodide. Written against PyTorch's API: an op that torchweb lacks
# makes its case FAIL with a message that names it. Defines `await replay_cases(json, filter)`,
# which returns {"total", "passed", "failed": [[id, message]], "seconds"}.
import math
import sys
import time
import traceback
import types

import torchweb as torch

DEVICE = "webgpu"
_MISSING = object()


class Missing(Exception):
    """torchweb lacks an op or a method the case needs."""


# -- values ------------------------------------------------------------------------------------
def _num(v):
    if isinstance(v, str):
        return float(v)   # "nan", "inf", "-inf"
    return v


def _flat(data):
    if isinstance(data, list):
        out = []
        for v in data:
            out.extend(_flat(v))
        return out
    return [_num(data)]


def _nested(data):
    return [_nested(v) for v in data] if isinstance(data, list) else _num(data)


def _dtype(name):
    d = getattr(torch, name, None)
    if d is None:
        raise Missing(f"torchweb has no dtype torch.{name}")
    return d


def make_input(spec, requires_grad):
    dtype = _dtype(spec["dtype"])
    if "gen" in spec:   # built here, not shipped: large inputs
        t = torch.arange(spec["n"], dtype=dtype, device=DEVICE).reshape(spec["shape"])
    elif 0 in spec["shape"]:   # nested lists lose empty shapes
        t = torch.tensor([], dtype=dtype, device=DEVICE).reshape(spec["shape"])
    else:
        t = torch.tensor(_nested(spec["data"]), dtype=dtype, device=DEVICE)
    if requires_grad and t.is_floating_point():
        t.requires_grad_(True)
    return t


def apply_views(tensors, inputs):
    """The tensors the op sees: each input with its "then" steps (non-contiguous views)."""
    out = []
    for t, spec in zip(tensors, inputs):
        for name, args in spec.get("then", ()):
            fn = getattr(t, name, _MISSING)
            if fn is _MISSING:
                raise Missing(f"torchweb's Tensor has no method .{name}() (to build the input)")
            t = fn(*decode(args, []))
        out.append(t)
    return out


def decode(x, tensors):
    if isinstance(x, dict):
        if "tensor" in x:
            return tensors[x["tensor"]]
        if "tuple" in x:
            return tuple(decode(v, tensors) for v in x["tuple"])
        if "slice" in x:
            return slice(*x["slice"])
        if "float" in x:
            return float(x["float"])
        if "dtype" in x:
            return _dtype(x["dtype"])
        if "ellipsis" in x:
            return Ellipsis
        return {k: decode(v, tensors) for k, v in x.items()}
    if isinstance(x, list):
        return [decode(v, tensors) for v in x]
    return x


# -- calling the op ------------------------------------------------------------------------------
def resolve(case, args):
    style, op = case["style"], case["op"]
    if style == "getitem":
        return lambda *a, **k: a[0][a[1]]
    if style == "method":
        fn = getattr(args[0], op, _MISSING)
        if fn is _MISSING:
            raise Missing(f"torchweb's Tensor has no method .{op}()")
        return lambda *a, **k: fn(*a[1:], **k)
    fn, path = torch, "torchweb"
    for part in op.split("."):
        path += "." + part
        nxt = getattr(fn, part, _MISSING)
        if nxt is _MISSING and isinstance(fn, type(torch)):
            nxt = _import(path)   # a submodule not imported by its parent (torch.nn, ...)
        if nxt is _MISSING:
            raise Missing(f"{path} is missing (torch.{op})")
        fn = nxt
    return fn


def _import(name):
    import importlib
    try:
        return importlib.import_module(name)
    except ImportError:
        return _MISSING


def outputs(result):
    if isinstance(result, (tuple, list)):
        return list(result), True
    return [result], False


# -- comparing -------------------------------------------------------------------------------------
def _dtype_name(d):
    return getattr(d, "name", None) or str(d).replace("torch.", "")


def _close(got, want, rtol, atol):
    if isinstance(want, bool) or isinstance(got, bool):
        return bool(got) == bool(want)
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, float) and math.isinf(want):
        return got == want
    if isinstance(got, float) and (math.isnan(got) or math.isinf(got)):
        return False
    return abs(got - want) <= atol + rtol * abs(want)


def _values(t):
    v = t.tolist()   # blocks on the GPU (JSPI): runPythonAsync allows it
    return _flat(v) if isinstance(v, list) else [v]


def compare(got, want, rtol, atol, what="output"):
    """None when got (a torchweb tensor) matches the recorded tensor want; else a message."""
    if not hasattr(got, "shape") or not hasattr(got, "tolist"):
        return f"{what}: expected a tensor, got {type(got).__name__}"
    dev = getattr(getattr(got, "device", None), "type", None)
    if dev != DEVICE:
        return f"{what}: on device {dev!r}, expected {DEVICE!r}"
    if list(got.shape) != want["shape"]:
        return f"{what}: shape {list(got.shape)}, expected {want['shape']}"
    if _dtype_name(got.dtype) != want["dtype"]:
        return f"{what}: dtype {_dtype_name(got.dtype)}, expected {want['dtype']}"
    if "stride" in want and list(got.stride()) != want["stride"]:
        return f"{what}: stride {list(got.stride())}, expected {want['stride']} (PyTorch's view strides)"
    g, w = _values(got), _flat(want["data"])
    if len(g) != len(w):
        return f"{what}: {len(g)} values, expected {len(w)}"
    bad = [i for i, (a, b) in enumerate(zip(g, w)) if not _close(a, b, rtol, atol)]
    if bad:
        i = bad[0]
        return (f"{what}: {len(bad)} of {len(w)} values differ (rtol={rtol}, atol={atol}); "
                f"first at flat index {i}: got {g[i]!r}, expected {w[i]!r}")
    return None


def _weights(data):
    return torch.tensor(_nested(data), dtype=torch.float32, device=DEVICE)


# -- one case --------------------------------------------------------------------------------------
def run_script(case):
    """A whole program written for PyTorch: run it with `import torch` giving torchweb, then
    compare the `result` it sets with PyTorch's."""
    if hasattr(torch, "install_torch_alias"):
        torch.install_torch_alias()
    modules = case.get("modules", [])
    ns = {"__name__": "__script__"}
    try:
        install_modules(modules)
        exec(compile(case["code"], case["op"], "exec"), ns)
    finally:
        for m in modules:
            sys.modules.pop(m["name"], None)
    return _compare_result(ns.get("result"), case["result"], case["tol"], "result")


def install_modules(modules):
    """The repository's modules a script imports (record_cases.py ships their text with the
    case: the page has no files to import), importable under their names; each runs with the
    torch installed now."""
    for m in modules:
        mod = types.ModuleType(m["name"])
        mod.__file__ = m["path"]
        sys.modules[m["name"]] = mod
        exec(compile(m["source"], m["path"], "exec"), mod.__dict__)


def _compare_result(got, want, tol, where):
    if isinstance(want, dict):
        if not isinstance(got, dict) or sorted(got) != sorted(want):
            return f"{where}: keys {sorted(got) if isinstance(got, dict) else type(got).__name__}, expected {sorted(want)}"
        for k in want:
            msg = _compare_result(got[k], want[k], tol, f"{where}[{k!r}]")
            if msg:
                return msg
        return None
    if isinstance(want, list):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"{where}: got {got!r}, expected a list of {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            msg = _compare_result(g, w, tol, f"{where}[{i}]")
            if msg:
                return msg
        return None
    if isinstance(want, str) and want not in ("nan", "inf", "-inf"):
        return None if got == want else f"{where}: got {got!r}, expected {want!r}"   # text (reprs, keys)
    if isinstance(want, (int, float, str)) and not isinstance(want, bool):
        if not _close(float(got), _num(want), *tol):
            return f"{where}: got {got!r}, expected {want!r}"
        return None
    return None if got == want else f"{where}: got {got!r}, expected {want!r}"


def run_case(case):
    """None when the case passes; else a message."""
    if case["style"] == "script":
        return run_script(case)
    want_grad = "grad" in case
    tensors = [make_input(s, want_grad) for s in case["inputs"]]   # the leaves
    seen = apply_views(tensors, case["inputs"])
    args = decode(case["args"], seen)
    kwargs = {k: decode(v, seen) for k, v in case["kwargs"].items()}
    fn = resolve(case, args)
    rtol, atol = case["tol"]
    if case.get("int64_past_int32") and DEVICE == "webgpu":
        case = dict(case, raises="Int64RangeError")   # the documented deviation: refused
    if "raises" in case:
        try:
            for out in outputs(fn(*args, **kwargs))[0]:
                out.tolist()   # errors found by the GPU are raised at readback
        except Exception as e:
            if type(e).__name__ == case["raises"]:
                return None
            return f"raised {type(e).__name__}: {e}; expected {case['raises']}"
        return f"did not raise; expected {case['raises']}"
    result = fn(*args, **kwargs)
    outs, is_tuple = outputs(result)
    if case.get("check") == "sum":   # large outputs: compare their sum
        msg = compare(outs[0].sum(), case["expected"], rtol, atol, "sum of output")
        if msg:
            return msg
    else:
        wants = case["expected"]["tuple"] if "tuple" in case["expected"] else [case["expected"]]
        if is_tuple != ("tuple" in case["expected"]) or len(outs) != len(wants):
            return f"returned {len(outs)} output(s) (tuple={is_tuple}), expected {len(wants)}"
        for k, (o, w) in enumerate(zip(outs, wants)):
            msg = compare(o, w, rtol, atol, f"output {k}" if is_tuple else "output")
            if msg:
                return msg
    if want_grad:
        return check_grads(case, tensors, outs)
    return None


def check_grads(case, tensors, outs):
    loss = None
    for o, w in zip(outs, case["grad"]["weights"]):
        if w is not None:
            term = (o * _weights(w)).sum()
            loss = term if loss is None else loss + term
    loss.backward()
    rtol, atol = case["tol_grad"]
    for i, (t, want) in enumerate(zip(tensors, case["grad"]["grads"])):
        got = t.grad if t.is_floating_point() else None
        if want is None:
            if got is not None and any(v != 0 for v in _values(got)):
                return f"grad of input {i}: expected None (no gradient), got nonzero values"
            continue
        if got is None:
            return f"grad of input {i} is None; expected a gradient of shape {want['shape']}"
        msg = compare(got, want, rtol, atol, f"grad of input {i}")
        if msg:
            return msg
    return None


def _short_traceback(e):
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return "".join(tb[-3:]).strip()


def _take_gpu_errors():
    """Uncaptured WebGPU errors since the last case (validation errors give silent garbage)."""
    try:
        from torchweb.backends.webgpu.runtime import get_runtime
        take = getattr(get_runtime().driver, "take_errors", None)
        return take() if take else []
    except Exception:   # no GPU runtime (or a host run against PyTorch): nothing to take
        return []


async def replay_cases(cases_json, case_filter=""):
    import json
    doc = json.loads(cases_json)
    cases = [c for c in doc["cases"] if case_filter in c["id"]]
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(DEVICE)   # creation ops without device= land on the GPU
    failed, passed = [], 0
    t0 = time.time()
    for i, case in enumerate(cases):
        t_case = time.time()
        try:
            msg = run_case(case)
        except Missing as e:
            msg = f"missing in torchweb: {e}"
        except Exception as e:
            msg = f"raised {type(e).__name__}: {_short_traceback(e)}"
        errors = _take_gpu_errors()
        if errors and not msg:
            msg = "WebGPU errors: " + "; ".join(errors)
        if msg:
            failed.append([case["id"], msg])
        else:
            passed += 1
        # Progress in the page's log: where a hang or a slow case is, is visible as it runs.
        took = time.time() - t_case
        if took > 5 or (i + 1) % 100 == 0 or i + 1 == len(cases):
            print(f"replay: {i + 1}/{len(cases)} done, {len(failed)} failed"
                  + (f" ({case['id']} took {took:.1f} s)" if took > 5 else ""))
    return {"total": len(cases), "passed": passed, "failed": failed,
            "seconds": round(time.time() - t0, 2), "recorded_with": doc.get("torch")}
