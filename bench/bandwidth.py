"""Memory-bound kernels (issue 9: elementwise and reductions on 64M elements) timed per kernel
variant against PyTorch.

    PYTHONPATH=src python3 bench/bandwidth.py            # GPU machine: the issue's sizes
    PYTHONPATH=src python3 bench/bandwidth.py --quick    # lavapipe: small sizes, checks it runs
    options: --cases add,sum (substrings)  --variants old,v4p4 (substrings)  --repeat 5

Each case runs under each of its variants: a variant sets knobs of the kernel modules (the FAST
dicts of kernels/elementwise.py, reduction.py, softmax.py; pipelines are keyed on them, so
variants compile apart and compare side by side in one run). "default" leaves the knobs as
shipped. For each: the result is checked against PyTorch (CUDA where present, else CPU), then
warm-up, then best of `repeat` timings of 10 calls and one sync. Prints ms, GB/s (bytes a
perfect kernel moves) and ratio = PyTorch ms / ours (issue 9 wants >= 0.8); writes
$OUT/bandwidth.json when $OUT is set.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import torchweb  # noqa: E402
from torchweb.backends.webgpu.kernels import elementwise as EW, reduction as RED, softmax as SM  # noqa: E402
from timing import best_of, warm_up  # noqa: E402  (bench/, the script's folder)



class _PoolKnob:
    """The buffer pool's cap on free bytes as a knob (pool.py: free buffers past it are
    destroyed, so a workload with several 256 MB temporaries re-creates them every call)."""

    class _Fast(dict):
        def __setitem__(self, k, v):
            super().__setitem__(k, v)
            from torchweb.backends.webgpu.runtime import get_runtime
            get_runtime().pool.max_free_bytes = v

    def __init__(self):
        from torchweb.backends.webgpu.runtime import get_runtime
        self.FAST = self._Fast(max_free=get_runtime().pool.max_free_bytes)


MODULES = {"ew": EW, "red": RED, "sm": SM, "pool": _PoolKnob()}

# name -> knob settings ("module.key": value); a knob a module lacks makes the variant n/a
EW_VARIANTS = {
    "default": {},
    "old": {"ew.vec": 0},                        # the generic strided kernel
    "s1": {"ew.vec": 1, "ew.per": 1},            # contiguous path, scalar, 1 element a thread
    "s4": {"ew.vec": 1, "ew.per": 4},
    "v4p1": {"ew.vec": 4, "ew.per": 1},
    "v4p2": {"ew.vec": 4, "ew.per": 2},
    "v4p4": {"ew.vec": 4, "ew.per": 4},
    "v4p8": {"ew.vec": 4, "ew.per": 8},
    "v4p2wg128": {"ew.vec": 4, "ew.per": 2, "ew.wg": 128},
    "v4p4wg512": {"ew.vec": 4, "ew.per": 4, "ew.wg": 512},
    "pool2G": {"pool.max_free": 2 << 30},       # shipped kernels, a pool keeping 2 GB free
}
RED_VARIANTS = {
    "default": {},
    "old": {"red.vec": 0},                       # generic: per-element index math
    "s1": {"red.vec": 1},                        # contiguous path, scalar loads
    "v4": {"red.vec": 4},
    "v4wg512": {"red.vec": 4, "red.wg": 512},
    "v4wg128": {"red.vec": 4, "red.wg": 128},
    "cols_off": {"red.col_rows": 0},             # x.sum(0): a workgroup per output, strided
    "cols4": {"red.col_rows": 4},                # 64 outputs a workgroup, 4 row groups
    "cols8": {"red.col_rows": 8},
    "cols32": {"red.col_rows": 32},
    "short0": {"red.short": 0},                  # short rows: a workgroup each (as before)
    "short255": {"red.short": 255},
    "pool2G": {"pool.max_free": 2 << 30},
}
SM_VARIANTS = {
    "default": {},
    "old": {"sm.vec": 0},
    "v4": {"sm.vec": 4, "sm.cache": 0},          # vec4 loads, three passes over the row
    "v4cache": {"sm.vec": 4, "sm.cache": 1},     # the row held in registers: read once
    "v4cachewg512": {"sm.vec": 4, "sm.cache": 1, "sm.wg": 512},
    "v4cachewg128": {"sm.vec": 4, "sm.cache": 1, "sm.wg": 128},   # 8 vec4s a thread at 4096
    "two_exps": {"sm.vec": 4, "sm.cache": 1, "sm.keep_exp": 0},    # exp(x - max) again to write
    "v4cachewg1024": {"sm.vec": 4, "sm.cache": 1, "sm.wg": 1024}, # (past a browser's 256)
    "short0": {"sm.short": 0},                   # short rows: a workgroup each (as before)
    "short256": {"sm.short": 256},               # rows up to 256: a thread each
    "nofit": {"sm.fit": 0},                      # the full workgroup for short rows too
}


def _cases(quick):
    n = (1 << 16) + 4 if quick else 1 << 26
    rr, rc = (96, 260) if quick else (8192, 8192)
    sr, sc = (64, 1000) if quick else (4096, 4096)
    ar = 96 if quick else 24576
    g = torch.Generator().manual_seed(0)

    def rnd(*shape):
        return torch.randn(*shape, generator=g)

    # (name, make inputs, fn(lib, *inputs), bytes moved, variants, tolerance kind)
    return [
        ("add_f32_64M", lambda: (rnd(n), rnd(n), torch.empty(n)), lambda L, a, b, c: L.add(a, b, out=c),
         12 * n, EW_VARIANTS, "exact"),
        # realized at once: a lazy result that dies unread is never computed (torchweb/lazy)
        ("fused_x*a+b_f32_64M", lambda: (rnd(n), rnd(n), rnd(n)), lambda L, x, a, b: _realized(L, x * a + b),
         16 * n, EW_VARIANTS, "exact"),
        ("sum_f32_64M", lambda: (rnd(n),), lambda L, a: a.sum(), 4 * n, RED_VARIANTS, "sum"),
        (f"rowsum_f32_{rr}x{rc}", lambda: (rnd(rr, rc),), lambda L, a: a.sum(1), 4 * rr * rc, RED_VARIANTS, "sum"),
        (f"colsum_f32_{rr}x{rc}", lambda: (rnd(rr, rc),), lambda L, a: a.sum(0), 4 * rr * rc, RED_VARIANTS, "sum"),
        (f"rowmean_f32_{rr}x{rc}", lambda: (rnd(rr, rc),), lambda L, a: a.mean(1), 4 * rr * rc, RED_VARIANTS, "sum"),
        (f"rowvar_f32_{rr}x{rc}", lambda: (rnd(rr, rc),), lambda L, a: a.var(1), 4 * rr * rc, RED_VARIANTS, "sum"),
        (f"softmax_f32_{sr}x{sc}", lambda: (rnd(sr, sc),), lambda L, a: a.softmax(-1), 8 * sr * sc,
         SM_VARIANTS, "close"),
        # attention-shaped rows, and short rows (a thread per row below softmax.FAST["short"])
        (f"softmax_f32_{ar}x256", lambda: (rnd(ar, 256),), lambda L, a: a.softmax(-1), 8 * ar * 256,
         SM_VARIANTS, "close"),
        ("softmax_f32_2048x16", lambda: (rnd(2048, 16),), lambda L, a: a.softmax(-1), 8 * 2048 * 16,
         SM_VARIANTS, "close"),
        ("rowsum_f32_4096x64", lambda: (rnd(4096, 64),), lambda L, a: a.sum(-1), 4 * 4096 * 64,
         RED_VARIANTS, "sum"),
    ]


def _realized(lib, y):
    if lib is torchweb:
        from torchweb.backends.webgpu import lazy
        lazy.materialize(y._storage)
    return y


def _time(fn, sync, repeat, inner=10):
    """(best of `repeat` timings of `inner` calls and one sync, per call; the marginal time of a
    call: (best time of 4 * inner calls - best of inner) / (3 * inner), which leaves out what a
    timing pays once, the sync's round trip say; the best host time per call before the sync)."""
    warm_up(fn, sync)
    per_call, record = best_of(fn, sync, repeat, inner)
    per_call_4, record_4 = best_of(fn, sync, repeat, 4 * inner)
    return per_call, (4 * per_call_4 - per_call) / 3, min(record, record_4)


def _apply(settings):
    """Set a variant's knobs; returns the old values to restore, or None if a knob is missing."""
    saved = []
    for k, v in settings.items():
        mod, key = k.split(".")
        fast = getattr(MODULES[mod], "FAST", None)
        if fast is None or key not in fast:
            for m, kk, old in saved:
                MODULES[m].FAST[kk] = old
            return None
        saved.append((mod, key, fast[key]))
        fast[key] = v
    return saved


def _restore(saved):
    for m, k, old in saved:
        MODULES[m].FAST[k] = old


def _error(got, ref, inputs, kind):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return float("inf"), 0.0
    if kind == "exact":   # elementwise: float32 ops (a GPU compiler may contract a * b + c to an fma)
        return float(np.max(np.abs(got - ref), initial=0.0)) / max(float(np.max(np.abs(ref), initial=0.0)), 1e-30), 1e-6
    if kind == "sum":     # order of float32 additions: relative to the sum of |x|
        scale = float(np.sum(np.abs(inputs[0].numpy().astype(np.float64)))) / max(1, ref.size)
        return float(np.max(np.abs(got - ref), initial=0.0)) / max(scale, 1e-30), 1e-4
    return float(np.max(np.abs(got - ref), initial=0.0)), 1e-6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", default="")
    ap.add_argument("--variants", default="")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    tsync = torch.cuda.synchronize if cuda else (lambda: None)
    from torchweb.backends.webgpu.runtime import get_runtime
    features = sorted(get_runtime().features)
    info = torchweb.webgpu.adapter_info()
    print(f"adapter: {info}\nfeatures: {features}\ntorch: {torch.__version__} on {dev}", flush=True)
    print("knobs as shipped: " + ", ".join(f"{m}={getattr(M, 'FAST', None)}" for m, M in MODULES.items()), flush=True)
    repeat = 1 if args.quick else args.repeat
    results = []
    t_start = time.perf_counter()
    for name, make, fn, nbytes, variants, tol_kind in _cases(args.quick):
        if args.cases and not any(x in name for x in args.cases.split(",")):
            continue
        cpu_in = make()
        t_in = [x.to(dev) for x in cpu_in]
        ref = fn(torch, *t_in)
        tsync()
        ref_ms, ref_slope, _ = (v * 1e3 for v in _time(lambda: fn(torch, *t_in), tsync, repeat))
        ref_np = ref.cpu().numpy()
        del ref
        print(f"{name}: torch {dev} {ref_ms:.3f} ms {nbytes / ref_ms / 1e6:.0f} GB/s (marginal {ref_slope:.3f} ms)",
              flush=True)
        results.append(dict(case=name, variant="torch_" + dev, ms=ref_ms, gbs=nbytes / ref_ms / 1e6, ratio=1.0,
                            marginal_ms=ref_slope))
        w_in = [torchweb.from_numpy(x.numpy()).to("webgpu") for x in cpu_in]
        for vname, settings in variants.items():
            if args.variants and vname != "default" and not any(x in vname for x in args.variants.split(",")):
                continue
            saved = _apply(settings)
            if saved is None:
                print(f"  {vname:14s} n/a (knob not in this build)", flush=True)
                continue
            try:
                got = fn(torchweb, *w_in).numpy()
                err, tol = _error(got, ref_np, cpu_in, tol_kind)
                if not err <= tol:
                    print(f"  {vname:14s} WRONG: error {err:.2e} (tolerance {tol:.0e})", flush=True)
                    results.append(dict(case=name, variant=vname, error=f"wrong {err:.2e}"))
                    continue
                # torchweb submits at the sync (or every 1024 dispatches): the GPU starts after the
                # host has recorded every call, so a call costs its recording plus its GPU time;
                # gpu_est = marginal - recording, the kernels' own time
                ms, slope, rec = (v * 1e3 for v in _time(lambda: fn(torchweb, *w_in), torchweb.webgpu.synchronize, repeat))
            except Exception as e:   # a variant that fails to compile or run: reported, not fatal
                msg = str(e).split("\n")[0][:200]
                print(f"  {vname:14s} FAILED: {msg}", flush=True)
                results.append(dict(case=name, variant=vname, error=msg))
                continue
            finally:
                _restore(saved)
            r = dict(case=name, variant=vname, settings=settings, ms=ms, gbs=nbytes / ms / 1e6,
                     ratio=ref_ms / ms, err=err, marginal_ms=slope, marginal_ratio=ref_slope / slope if slope > 0 else None,
                     record_ms=rec, gpu_est_ms=slope - rec,
                     gpu_est_ratio=ref_slope / (slope - rec) if slope - rec > 0 else None)
            results.append(r)
            print(f"  {vname:14s} {ms:9.3f} ms {r['gbs']:7.0f} GB/s  ratio {r['ratio']:.3f}  err {err:.1e}"
                  f"  (marginal {slope:.3f} ms, {nbytes / max(slope, 1e-9) / 1e6:.0f} GB/s; host recording {rec:.3f} ms,"
                  f" GPU est. {slope - rec:.3f} ms {nbytes / max(slope - rec, 1e-9) / 1e6:.0f} GB/s)", flush=True)
        del w_in, t_in
    print("\nbest per case:")
    best = {}
    for r in results:
        if "ratio" in r and not r["variant"].startswith("torch"):
            if r["case"] not in best or r["ms"] < best[r["case"]]["ms"]:
                best[r["case"]] = r
    for c, r in best.items():
        print(f"  {c:28s} {r['variant']:14s} ratio {r['ratio']:.3f} ({r['gbs']:.0f} GB/s)")
    print(f"total {time.perf_counter() - t_start:.1f} s")
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "bandwidth.json"), "w") as f:
            json.dump(dict(adapter=str(info), features=features, torch=torch.__version__, device=dev,
                           results=results, best=best), f, indent=1)


if __name__ == "__main__":
    main()
