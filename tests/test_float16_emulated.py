"""float16 on adapters without 'shader-f16' (the browser's SwiftShader): float16 tensors are held
in f32 words, each rounded to half precision where a kernel stores it (kernels/wgsl.py
round_f16), and computed in float32, so every kernel runs unchanged. Tested on lavapipe (which
has the feature) with TORCHWEB_NO_SHADER_F16=1, in a fresh interpreter (the runtime decides at
start), against PyTorch's float16."""

import json
import os
import subprocess
import sys
import textwrap

import torch

_SRC = os.path.join(os.path.dirname(__file__), "..", "src")

SPECIAL = [70000.0, 65510.0, -65519.0, 65520.0, 1e-8, 3e-6, -6.1e-5, 0.1, 1 / 3, 1000.7,
           float("nan"), float("inf"), -0.0]


def _run(code, **extra):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(_SRC), TORCHWEB_NO_SHADER_F16="1", **extra)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=env, timeout=300, cwd=os.path.dirname(__file__))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


_PRELUDE = """
    import json, math, conftest  # (lavapipe and browser limits, as the other tests)
    nan, inf = float("nan"), float("inf")
    import torchweb as tw
    assert "shader-f16" not in tw.webgpu.features() and tw.float16.gpu_storage == "f32"
    out = {}
    def put(name, t):
        out[name] = [None if v != v else v for v in t.float().reshape(-1).tolist()]
"""


def _same(got, want, rtol=0.0, atol=0.0):
    want = want.float().reshape(-1)
    got = torch.tensor([math_nan if v is None else v for v in got])
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)


math_nan = float("nan")


def _inputs():
    g = torch.Generator().manual_seed(5)
    return (torch.randn(6, 8, generator=g) * 4).tolist(), (torch.randn(8, 5, generator=g)).tolist()


def test_creation_casts_and_elementwise_round_like_pytorch():
    a, b = _inputs()
    got = _run(_PRELUDE + f"""
    special, a = {SPECIAL!r}, {a!r}
    put("cast", tw.tensor(special).half())
    put("created", tw.tensor(special, dtype=tw.float16))
    put("to", tw.tensor(special).to(tw.float16).to(tw.float32))
    x = tw.tensor(a, dtype=tw.float16)
    put("arith", x * 3 + 1)
    put("exp", (x / 4).exp())
    put("div", x / 7)
    put("mixed", x + tw.tensor(a) * 0.5)       # half + float: float, as PyTorch
    out["mixed_dtype"] = str((x + tw.tensor(a)).dtype)
    put("full", tw.full((3,), 0.1, dtype=tw.float16))
    put("sum", x.sum(1))
    put("softmax", x.softmax(-1))
    print(json.dumps(out))
    """)
    special = torch.tensor(SPECIAL)
    for k in ("cast", "created", "to"):
        _same(got[k], special.half())
    x = torch.tensor(a).half()
    _same(got["arith"], x * 3 + 1)
    _same(got["exp"], (x / 4).exp())
    _same(got["div"], x / 7)
    _same(got["mixed"], x + torch.tensor(a) * 0.5, rtol=1e-6, atol=1e-6)
    assert got["mixed_dtype"] == "torch.float32"
    _same(got["full"], torch.full((3,), 0.1, dtype=torch.float16))
    _same(got["sum"], x.sum(1), rtol=1e-3, atol=1e-2)
    _same(got["softmax"], x.softmax(-1), rtol=1e-3, atol=1e-3)


def test_matmul_and_a_half_model_round_trip():
    a, b = _inputs()
    w = torch.randn(5, 8, generator=torch.Generator().manual_seed(9))
    got = _run(_PRELUDE + f"""
    a, b, w = {a!r}, {b!r}, {w.tolist()!r}
    x, y = tw.tensor(a, dtype=tw.float16), tw.tensor(b, dtype=tw.float16)
    put("matmul", x @ y)
    m = tw.nn.Linear(8, 5)
    with tw.no_grad():
        m.weight.copy_(tw.tensor(w)); m.bias.fill_(0.25)
    m.half()
    out["half_dtypes"] = [str(p.dtype) for p in m.parameters()]
    put("forward", m(x))
    m.float()
    out["float_dtypes"] = [str(p.dtype) for p in m.parameters()]
    put("weight_back", m.weight)
    print(json.dumps(out))
    """)
    x, y = torch.tensor(a).half(), torch.tensor(b).half()
    _same(got["matmul"], x.float() @ y.float(), rtol=2e-3, atol=2e-2)   # (PyTorch's CPU half matmul)
    m = torch.nn.Linear(8, 5)
    with torch.no_grad():
        m.weight.copy_(w)
        m.bias.fill_(0.25)
    m.half()
    assert got["half_dtypes"] == ["torch.float16"] * 2
    _same(got["forward"], m(x), rtol=2e-3, atol=2e-2)
    m.float()
    assert got["float_dtypes"] == ["torch.float32"] * 2
    _same(got["weight_back"], m.weight)       # half's rounding kept, as in PyTorch


def test_state_dict_of_a_half_model_saves_and_loads(tmp_path):
    w = torch.randn(4, 3, generator=torch.Generator().manual_seed(3))
    theirs = torch.nn.Linear(3, 4).half()
    with torch.no_grad():
        theirs.weight.copy_(w.half())
    path_in, path_out = tmp_path / "theirs.pt", tmp_path / "ours.pt"
    torch.save(theirs.state_dict(), path_in)
    got = _run(_PRELUDE + f"""
    sd = tw.load({str(path_in)!r}, map_location="webgpu")
    out["loaded"] = {{k: [str(v.dtype), v.device.type] for k, v in sd.items()}}
    m = tw.nn.Linear(3, 4).to("webgpu").half()
    m.load_state_dict(sd)
    put("weight", m.weight)
    tw.save(m.state_dict(), {str(path_out)!r})
    tw.safetensors.save_file(m.state_dict(), {str(tmp_path / "ours.safetensors")!r})
    print(json.dumps(out))
    """)
    assert got["loaded"] == {"weight": ["torch.float16", "webgpu"], "bias": ["torch.float16", "webgpu"]}
    _same(got["weight"], theirs.weight)
    back = torch.load(path_out)
    assert back["weight"].dtype is torch.float16
    assert torch.equal(back["weight"], theirs.weight) and torch.equal(back["bias"], theirs.bias)
    raw = (tmp_path / "ours.safetensors").read_bytes()     # (the format, read by hand)
    n = int.from_bytes(raw[:8], "little")
    entry = json.loads(raw[8:8 + n])["weight"]
    lo, hi = entry["data_offsets"]
    assert entry["dtype"] == "F16"
    assert raw[8 + n + lo:8 + n + hi] == theirs.weight.detach().numpy().tobytes()
