"""bench/matmul_variants.py's (variant, shape) pairs written out as plain WebGPU work, so that
other runners time the same WGSL, bindings, parameters and grids without torchweb or Pyodide
in between: bench/gpu/dawn_matmul.mjs (Dawn in node: Tint, the browser's compiler) and
bench/matmul_variants_replay.py (wgpu-py: naga, torchweb's native path).

    PYTHONPATH=src python3 bench/matmul_variants_export.py --out mm.json [--quick] [--variants a,b]
        [--shapes a,b] [--names a,b] [--dtype f32]   (bench/gpu/matmul.sh runs it on the GPU machine)

What each case holds is what torchweb's runtime issues for it: the kernel runs through
kernels/matmul_tiles.run on the live runtime with its `pipeline` and `dispatch` recorded (the
dispatches are not run), so the WGSL, binding kinds, buffer sizes, parameter bytes and grids
come from torchweb's own planning (split-K slices and their summing kernel included). Inputs are
not written: a runner fills each input buffer with `fill(seed)` (below, repeated in the .mjs),
values k/4096 exact in f16 and f32; numpy computes sampled rows of the product in float64 as
the reference the runners check against (max error over max |ref| within `tol`).
Run it on the machine that runs the runners: the plan depends on the adapter's limits.
"""

import argparse
import functools
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402

import torchweb  # noqa: E402
from torchweb.backends.webgpu.kernels import matmul_tiles as T  # noqa: E402
from torchweb.backends.webgpu.runtime import get_runtime  # noqa: E402
from matmul_variants_shapes import FULL, QUICK, derived as _derived  # noqa: E402   (bench/)

TOL = {"f32": 1e-4, "f16": 2e-3}
SAMPLE = 12   # output rows, and 5x as many columns, the reference covers (first, last, spread)


@functools.lru_cache(maxsize=4)   # (the variants of one shape share their inputs)
def fill(numel, seed):
    """The input values a runner writes: a 32-bit integer hash of (index, seed) cut to 12 bits,
    as (k - 2048) / 4096 (exact in f16 and f32). bench/gpu/dawn_matmul.mjs repeats it."""
    x = np.arange(numel, dtype=np.uint32) * np.uint32(0x9E3779B1) + np.uint32((seed * 0x85EBCA77) & 0xFFFFFFFF)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x2C1B3C6D)
    x ^= x >> np.uint32(12)
    x *= np.uint32(0x297A2D39)
    x ^= x >> np.uint32(15)
    out = ((x >> np.uint32(20)).astype(np.float64) - 2048.0) / 4096.0
    out.flags.writeable = False
    return out


class Recorder:
    """Stands in for the runtime's pipeline() and dispatch() while matmul_tiles.run plans one
    case: keeps the pipelines' code and the dispatches, runs nothing."""

    def __init__(self, pipelines):
        self.pipelines, self.dispatches = pipelines, []
        self.codes = []   # the pipeline ids handed out (indices) -> ids in pipelines

    def pipeline(self, key, make_code, kinds):
        code = make_code()   # (not compiled here: the runners do)
        digest = hashlib.sha1((code + "|" + ",".join(kinds)).encode()).hexdigest()[:12]
        self.pipelines.setdefault(digest, dict(id=digest, code=code, kinds=list(kinds), key=repr(key)))
        self.codes.append(digest)
        return len(self.codes) - 1

    def dispatch(self, pid, grid, buffers, params, work=0):
        self.dispatches.append((pid, tuple(grid), list(buffers), bytes(params)))


def _view(storage_values, t):
    """The numpy view of tensor t (its shape, strides and offset) over its storage's values."""
    return np.lib.stride_tricks.as_strided(storage_values[t._offset:], shape=t._shape,
                                           strides=[s * 8 for s in t._stride])


_REFS = {}


def reference(a, b, seeds, batch, M, K, N):
    """(rows, columns, out's values there in float64) from the values the runners write; the
    variants of a shape share it."""
    key = (a._shape, a._stride, a._offset, b._shape, b._stride, b._offset, tuple(seeds.values()))
    if key not in _REFS:
        _REFS.clear()
        av = _view(fill(a._storage.numel, seeds["a"]), a).reshape(batch, M, K)
        bv = _view(fill(b._storage.numel, seeds["b"]), b).reshape(batch, K, N)
        rows = sorted({(i * batch * M) // SAMPLE for i in range(SAMPLE)} | {batch * M - 1})
        cols = sorted({(i * N) // (5 * SAMPLE) for i in range(5 * SAMPLE)} | {N - 1})
        sub = {bi: np.ascontiguousarray(bv[bi][:, cols]) for bi in {r // M for r in rows}}
        _REFS[key] = rows, cols, np.stack([av[r // M, r % M] @ sub[r // M] for r in rows])
    return _REFS[key]


def export_case(rt, pipelines, label, batch, M, K, N, at, bt, dtype, name):
    """One (shape, variant) as a dict, or None where the variant does not apply."""
    tdt = torchweb.float16 if dtype == "f16" else torchweb.float32
    shp = (lambda r, c: (batch, r, c) if batch > 1 else (r, c))
    a = torchweb.empty(shp(K, M) if at else shp(M, K), dtype=tdt, device="webgpu")
    b = torchweb.empty(shp(N, K) if bt else shp(K, N), dtype=tdt, device="webgpu")
    if at:
        a = a.transpose(-1, -2)
    if bt:
        b = b.transpose(-1, -2)
    out = torchweb.empty(shp(M, N), dtype=tdt, device="webgpu")
    if name == "table":   # what the `@` op picks: TABLE's variant, fitted to the device's limits
        variant, forced = T.choose(M, N, K, batch, rt.software_adapter), None
    else:
        variant, forced = name, name
    for t in (a, b, out):   # (their pending values written now, not among the recorded dispatches)
        t._storage.buffer_for_write()
    rec = Recorder(pipelines)
    T._PLANS.clear()   # (a cached plan would skip the pipeline() call the recorder reads)
    old, T.FORCED = T.FORCED, forced
    rt.pipeline, rt.dispatch = rec.pipeline, rec.dispatch
    try:
        T.run(rt, out, a, b, "f32", variant)
    finally:
        del rt.pipeline, rt.dispatch
        T.FORCED = old
        T._PLANS.clear()
    seeds = {"a": M * 7 + K * 3 + N + batch, "b": M * 7 + K * 3 + N + batch + 1}
    roles = {a._storage._buffer_id: "a", b._storage._buffer_id: "b", out._storage._buffer_id: "out"}
    st = {"a": a._storage, "b": b._storage, "out": out._storage}
    buffers, index = [], {}
    dispatches = []
    for pid, grid, bufs, params in rec.dispatches:
        binds = []
        for bid, size in bufs:
            if bid not in index:
                role = roles.get(bid, "tmp")
                index[bid] = len(buffers)
                s = st.get(role)
                buffers.append(dict(role=role, size=size, numel=s.numel if s else size // 4,
                                    dtype=s.dtype.gpu_storage if s else "f32",
                                    seed=seeds.get(role)))
            binds.append(index[bid])
        dispatches.append(dict(pipeline=rec.codes[pid], grid=list(grid), buffers=binds,
                               params=params.hex()))
    rows, cols, ref = reference(a, b, seeds, batch, M, K, N)
    if variant == T.SOFTWARE_VARIANT:
        variant = T.software_variant(rt)
    v = T.VARIANTS[variant] if forced else T.fitting(rt, T.VARIANTS[variant])
    return dict(shape=label, variant=name, resolved=v.name, batch=batch, M=M, K=K, N=N, at=at, bt=bt,
                dtype=dtype, flops=2.0 * batch * M * N * K, cls=T.shape_class(M, N, K, batch),
                buffers=buffers, dispatches=dispatches,
                check=dict(out_offset=out._offset, rows=rows, cols=cols, ref=ref.round(9).tolist(),
                           scale=float(np.abs(ref).max()) or 1.0,
                           tol=TOL[dtype] * (20 if v.acc16 else 1)))


def variant_names(rt, args):
    """The variants matmul_variants.py would time, less "mm2" (matmul.py's kernel: not a tile
    kernel), plus "table" (TABLE's pick, as the `@` op runs it)."""
    names = ["table"] + [n for n in T.VARIANTS if rt.software_adapter or not T.VARIANTS[n].wx]
    if args.variants:
        names = [n for n in ["table"] + list(T.VARIANTS) if any(x in n for x in args.variants.split(","))]
    if args.names:
        names = [_derived(n) for n in args.names.split(",")]
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--variants", default="")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--names", default="")
    ap.add_argument("--dtype", default="")
    args = ap.parse_args()
    rt = get_runtime()
    shapes = QUICK if args.quick else FULL
    shapes = [s for s in shapes if not args.shapes or any(x in s[0] for x in args.shapes.split(","))]
    shapes = [s for s in shapes if not args.dtype or s[-1] == args.dtype]
    names = variant_names(rt, args)
    pipelines, cases = {}, []
    for label, batch, M, K, N, at, bt, dtype in shapes:
        if dtype == "f16" and "shader-f16" not in rt.features:
            print(f"{label}: skipped (no shader-f16)", flush=True)
            continue
        for name in names:
            if name.endswith("acc16") and dtype != "f16":
                continue   # same code as the variant without acc16 for f32 (as matmul_variants.py)
            cases.append(export_case(rt, pipelines, label, batch, M, K, N, at, bt, dtype, name))
    info = torchweb.webgpu.adapter_info()
    with open(args.out, "w") as f:
        json.dump(dict(adapter=info, features=sorted(rt.features), pipelines=list(pipelines.values()),
                       cases=cases), f)
    print(f"wrote {args.out}: {len(cases)} cases, {len(pipelines)} pipelines ({len(shapes)} shapes x "
          f"{len(names)} variants) on {info.get('device') or info}", flush=True)


if __name__ == "__main__":
    main()
