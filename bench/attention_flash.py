"""F.scaled_dot_product_attention timed three ways at nanoGPT-like shapes: the composite
(softmax(q @ k^T) @ v from matmuls and softmax), the register-tiled fused kernels
(kernels/attention_flash.py) and PyTorch CUDA (TF32 off) where torch has CUDA; forward alone
and forward + backward, each under torchweb.compile (capture and replay) so that Python is out
of the figures. Each case first checks the fused result against the composite's.

    PYTHONPATH=src python3 bench/attention_flash.py [--shapes 16x6x256x64c,...] [--json OUT]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import torchweb  # noqa: E402
from torchweb.backends.webgpu import attention as A  # noqa: E402
from timing import best_of, warm_up  # noqa: E402

SHAPES = "16x6x256x64c,16x6x256x64n,16x6x128x64c,16x6x512x64c,16x12x256x32c,4x12x1024x64c"


def parse(s):
    b, h, t, d = (int(x) for x in s[:-1].split("x"))
    return b, h, t, d, s[-1] == "c"


def cases(lib, dev, shape):
    b, h, t, d, causal = shape
    F = lib.nn.functional
    q, k, v = (lib.randn(b, h, t, d, device=dev, requires_grad=True) for _ in range(3))
    go = lib.randn(b, h, t, d, device=dev)

    def fwd():
        with lib.no_grad():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def fwd_bwd():
        for x in (q, k, v):
            x.grad = None
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(go)
        return q.grad

    return fwd, fwd_bwd


def time_torchweb(shape, flash, steps, repeat, old=False):
    """flash False: the composite, or with old the earlier fused kernels (kernels/attention.py)."""
    A.FLASH = flash
    saved = A.COMPOSITE_MAX_SCORES
    A.COMPOSITE_MAX_SCORES = 0 if old or flash else 1 << 62
    try:
        torchweb.manual_seed(0)
        fwd, fb = cases(torchweb, "webgpu", shape)
        out = {}
        for name, fn in (("fwd", fwd), ("fwd_bwd", fb)):
            step = torchweb.compile(fn)
            sync = torchweb.webgpu.synchronize
            warm_up(step, sync, calls=3)
            out[name] = best_of(step, sync, repeat, steps)[0] * 1e3
        res = fb()
        return out, res.cpu().numpy()
    finally:
        A.FLASH = True
        A.COMPOSITE_MAX_SCORES = saved


def time_torch(shape, steps, repeat):
    import torch
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    fwd, fb = cases(torch, "cuda", shape)
    out = {}
    for name, fn in (("fwd", fwd), ("fwd_bwd", fb)):
        warm_up(fn, torch.cuda.synchronize, calls=3)
        out[name] = best_of(fn, torch.cuda.synchronize, repeat, steps)[0] * 1e3
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--old", action="store_true", help="also time kernels/attention.py's fused kernels")
    a = ap.parse_args()
    rows = []
    for s in a.shapes.split(","):
        shape = parse(s)
        comp, gc = time_torchweb(shape, False, a.steps, a.repeat)
        fused, gf = time_torchweb(shape, True, a.steps, a.repeat)
        err = float(abs(gc - gf).max())
        old = time_torchweb(shape, False, a.steps, a.repeat, old=True)[0] if a.old else None
        cuda = time_torch(shape, a.steps, a.repeat)
        row = {"shape": s, "composite_ms": comp, "fused_ms": fused, "old_fused_ms": old, "torch_cuda_ms": cuda,
               "dq_max_abs_diff": err}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)




def time_kernels(shape, steps, repeat):
    """The three kernels apart (ms a call), straight through the backend: forward, dK/dV, dQ."""
    from torchweb.backends.webgpu.kernels import attention_flash as K
    from torchweb.backends.webgpu.runtime import get_runtime
    b, h, t, d, causal = shape
    q, k, v, go = (torchweb.randn(b, h, t, d, device="webgpu") for _ in range(4))
    out = torchweb.empty(b, h, t, d, device="webgpu")
    lse = torchweb.empty(b, h, t, device="webgpu")
    ld = torchweb.randn(2, b * h * t, device="webgpu") * 0.1 + 5
    dq = torchweb.empty(b, h, t, d, device="webgpu")
    dkv = torchweb.empty(2 * b * h * t * d, device="webgpu")
    rt, sync, sc = get_runtime(), torchweb.webgpu.synchronize, d ** -0.5
    fns = {"fwd": lambda: K.forward(rt, out, lse, q, k, v, causal, sc),
           "dkv": lambda: K.backward(rt, dq, dkv, q, k, v, go, ld, causal, sc, which=("dkv",)),
           "dq": lambda: K.backward(rt, dq, dkv, q, k, v, go, ld, causal, sc, which=("dq",))}
    res = {}
    for name, fn in fns.items():
        warm_up(fn, sync, calls=3)
        res[name] = best_of(fn, sync, repeat, steps)[0] * 1e3
    return res


def kernels_main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--shapes", default="16x6x256x64c,16x6x256x64n")
    ap.add_argument("--tiles", default="16:8,8:8,8:4", help="FWD_TILE:BWD_TILE pairs")
    a = ap.parse_args()
    from torchweb.backends.webgpu.kernels import attention_flash as K
    for s in a.shapes.split(","):
        for tiles in a.tiles.split(","):
            K.FWD_TILE, bwd = (int(x) for x in tiles.split(":"))
            K.BWD_TILE = {True: bwd, False: bwd}
            print(json.dumps({"shape": s, "tiles": tiles, "ms": time_kernels(parse(s), 20, 5)}), flush=True)


if __name__ == "__main__":
    kernels_main() if "--kernels" in sys.argv else main()
