"""Matmul kernel variants (kernels/matmul_tiles.py) timed per shape against PyTorch.

    PYTHONPATH=src python3 bench/matmul_variants.py            # GPU machine: full shapes (< 4 min)
    PYTHONPATH=src python3 bench/matmul_variants.py --quick    # lavapipe: small shapes, checks it runs
    options: --variants a,b  --shapes 4096,bmm  (substrings)  --names a,b (exact; "table": what
             kernels/matmul_tiles.py's TABLE picks, through the `@` op; "NAME@s8": variant NAME
             with split-K up to 8, "NAME@f132": with fill 132, "NAME@s16f264": both)  --repeat 5  --dtype f32
             --kernel: time the kernel alone (matmul_tiles.run into a preallocated output), not
             the `@` op around it; on the GPU small products are otherwise bound by Python's
             per-op cost (the `host` column: recording time per call), not by the kernel
    SwiftShader (CPU; the barrier-free d* variants run on software adapters, or when named):
    VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json python3 bench/matmul_variants.py \
        --shapes mm512,mm1024 --variants t128x128_k8_db,_w --repeat 3

For each (variant, shape): warm-up (compiles), then best of `repeat` runs of N calls and one
sync; the result is checked against PyTorch (CUDA with TF32 off where present, else CPU) before
its time counts. Prints ms, TFLOP/s and ratio = PyTorch time / ours (1.0 = parity), and the best
variant per shape class; writes $OUT/matmul.json when $OUT is set.
"""

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import torchweb  # noqa: E402
from torchweb.backends.webgpu.kernels import matmul_tiles as T  # noqa: E402
from timing import best_of, calls_for_budget, warm_up  # noqa: E402  (bench/, the script's folder)

from matmul_variants_shapes import FULL, QUICK, derived as _derived  # noqa: E402


def _time(fn, sync, repeat, budget, host=False):
    """Best time per call; host: (that, the best time per call of recording alone)."""
    warm_up(fn, sync)
    t = best_of(fn, sync, repeat, calls_for_budget(fn, sync, budget))
    return t if host else t[0]


def _operands(batch, M, K, N, at, bt, dtype, dev):
    g = torch.Generator().manual_seed(M * 7 + K * 3 + N + batch)
    shp = (lambda r, c: (batch, r, c) if batch > 1 else (r, c))
    a = torch.randn(shp(K, M) if at else shp(M, K), generator=g)
    b = torch.randn(shp(N, K) if bt else shp(K, N), generator=g)
    td = torch.float16 if dtype == "f16" else torch.float32
    a, b = a.to(td), b.to(td)
    ours_a = torchweb.from_numpy(a.numpy()).to("webgpu")
    ours_b = torchweb.from_numpy(b.numpy()).to("webgpu")
    if at:
        a, ours_a = a.transpose(-1, -2), ours_a.transpose(-1, -2)
    if bt:
        b, ours_b = b.transpose(-1, -2), ours_b.transpose(-1, -2)
    return a.to(dev), b.to(dev), ours_a, ours_b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--variants", default="")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--names", default="")
    ap.add_argument("--dtype", default="", help="only shapes of this dtype (f32, f16)")
    ap.add_argument("--kernel", action="store_true")
    ap.add_argument("--budget", type=float, default=0.03)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        tsync = torch.cuda.synchronize
    else:
        tsync = (lambda: None)
    from torchweb.backends.webgpu.runtime import get_runtime
    features = sorted(get_runtime().features)
    info = torchweb.webgpu.adapter_info()
    print(f"adapter: {info}\nfeatures: {features}\ntorch: {torch.__version__} on {dev}", flush=True)
    shapes = QUICK if args.quick else FULL
    shapes = [s for s in shapes if not args.shapes or any(x in s[0] for x in args.shapes.split(","))]
    shapes = [s for s in shapes if not args.dtype or s[-1] == args.dtype]
    names = ["mm2"] + list(T.VARIANTS)
    if not get_runtime().software_adapter:   # the barrier-free ones (d...) are for CPUs: named only
        names = [n for n in names if n == "mm2" or not T.VARIANTS[n].wx]
    if args.variants:
        names = [n for n in ["mm2"] + list(T.VARIANTS) if any(x in n for x in args.variants.split(","))]
    if args.names:
        names = [_derived(n) for n in args.names.split(",")]
    repeat = 1 if args.quick else args.repeat
    budget = 0.002 if args.quick else args.budget
    rt = get_runtime()
    results = []
    t_start = time.perf_counter()
    for label, batch, M, K, N, at, bt, dtype in shapes:
        if dtype == "f16" and "shader-f16" not in features:
            print(f"{label}: skipped (no shader-f16)", flush=True)
            continue
        a, b, oa, ob = _operands(batch, M, K, N, at, bt, dtype, dev)
        flops = 2.0 * batch * M * N * K
        ref = (a @ b)
        tsync()
        ref_ms = _time(lambda: a @ b, tsync, repeat, budget) * 1e3
        ref_np = ref.float().cpu().numpy()
        ref_ref = (a.float() @ b.float()).cpu().numpy() if dtype == "f16" else ref_np
        scale = float(np.abs(ref_ref).max()) or 1.0
        cls = T.shape_class(M, N, K, batch)
        print(f"{label} [{cls}] torch {dev}: {ref_ms:.3f} ms {flops / ref_ms / 1e9:.1f} TFLOP/s", flush=True)
        results.append(dict(shape=label, variant="torch_" + dev, ms=ref_ms, tflops=flops / ref_ms / 1e9,
                            ratio=1.0, cls=cls, dtype=dtype))
        for name in names:
            if name.endswith("acc16") and dtype != "f16":
                continue   # same code as the variant without acc16 for f32
            T.FORCED = name if name != "table" else None   # "table": what TABLE picks, as `@`
            if args.kernel and name != "table":   # the kernel alone: its out, no op around it
                out = torchweb.empty(tuple(ref.shape), dtype=oa.dtype, device="webgpu")
                fn = (lambda: T.run(rt, out, oa, ob, "f32", name)) if name != "mm2" else (lambda: oa @ ob)
                fn.kernel = name != "mm2"
            else:
                fn = (lambda: oa @ ob)
            try:
                got = (fn(), out.numpy())[1] if getattr(fn, "kernel", False) else (oa @ ob).numpy()
                err = float(np.abs(got.astype(np.float32) - ref_ref).max()) / scale
                tol = {"f32": 1e-4, "f16": 2e-3}[dtype] * (20 if name.endswith("acc16") else 1)
                if not err <= tol:
                    print(f"  {name:22s} WRONG: max error {err:.2e} of max |ref| (tolerance {tol:.0e})", flush=True)
                    results.append(dict(shape=label, variant=name, error=f"wrong {err:.2e}", cls=cls, dtype=dtype))
                    continue
                ms, host = _time(fn, torchweb.webgpu.synchronize, repeat, budget, True)
                ms, host = ms * 1e3, host * 1e3
            except Exception as e:  # a variant that fails to compile or run: reported, not fatal
                msg = str(e).split("\n")[0][:200]
                print(f"  {name:22s} FAILED: {msg}", flush=True)
                results.append(dict(shape=label, variant=name, error=msg, cls=cls, dtype=dtype))
                continue
            finally:
                T.FORCED = None
            r = dict(shape=label, variant=name, ms=ms, host_ms=host, tflops=flops / ms / 1e9,
                     ratio=ref_ms / ms, err=err, cls=cls, dtype=dtype, kernel_only=getattr(fn, "kernel", False))
            results.append(r)
            print(f"  {name:22s} {ms:9.3f} ms (host {host:.3f}) {r['tflops']:7.2f} TFLOP/s  ratio {r['ratio']:.3f}"
                  f"  err {err:.1e}", flush=True)
        del a, b, oa, ob, ref
        _save(info, features, dev, results, {})   # as it goes: a run cut short keeps its shapes
    print("\nbest per shape:")
    best_by_shape = {}
    for r in results:
        if "ratio" in r and not r["variant"].startswith("torch"):
            cur = best_by_shape.get(r["shape"])
            if cur is None or r["ms"] < cur["ms"]:
                best_by_shape[r["shape"]] = r
    for s, r in best_by_shape.items():
        print(f"  {s:28s} [{r['cls']}] {r['variant']:22s} ratio {r['ratio']:.3f} ({r['tflops']:.2f} TFLOP/s)")
    print(f"total {time.perf_counter() - t_start:.1f} s")
    _save(info, features, dev, results, best_by_shape)



def _save(info, features, dev, results, best):
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "matmul.json"), "w") as f:
            json.dump(dict(adapter=str(info), features=features, torch=torch.__version__, device=dev,
                           results=results, best=best), f, indent=1)


if __name__ == "__main__":
    main()
