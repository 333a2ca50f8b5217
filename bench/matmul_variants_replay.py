"""Replays a bench/matmul_variants_export.py file through wgpu-py (wgpu-native: naga compiles the
WGSL to SPIR-V), the way bench/gpu/dawn_matmul.mjs replays it through Dawn: the same kernels,
bindings, parameters and grids, checked against the file's reference, then timed.

    PYTHONPATH=src python3 bench/matmul_variants_replay.py mm.json --out native.json [--reps 5]
        [--budget 0.02] [--most 200] [--only SUBSTR]

Per case: one compute pass of N copies of the case's dispatches (as torchweb's runtime encodes a
flush: one pass, the parameters at 256-byte dynamic offsets of one uniform buffer), N filling
about `budget` seconds; best of `reps` submits, timed by GPU timestamps at the pass's ends
(where the adapter has 'timestamp-query') and by the wall clock around submit and wait.
The device is torchweb's own (driver_native.py: its limits and features).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402
import wgpu  # noqa: E402

from matmul_variants_export import fill  # noqa: E402

ALIGN = 256   # minUniformBufferOffsetAlignment: each dispatch's parameters at a multiple of it
NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32}


class Replayer:
    def __init__(self):
        from torchweb.backends.webgpu.runtime import get_runtime
        drv = get_runtime().driver
        self.device, self.info, self.wait = drv.device, drv.adapter_info, drv.wait   # (wait: a device poll)
        self.timestamps = "timestamp-query" in self.device.features
        self.pipelines, self.layouts, self.compile_ms = {}, {}, {}
        if self.timestamps:
            self.qs = self.device.create_query_set(type="timestamp", count=2)
            self.resolve = self.device.create_buffer(size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)

    def pipeline(self, p):
        if p["id"] not in self.pipelines:
            types = {"uniform": wgpu.BufferBindingType.uniform, "read": wgpu.BufferBindingType.read_only_storage,
                     "write": wgpu.BufferBindingType.storage}
            key = tuple(p["kinds"])
            if key not in self.layouts:   # as driver_native.py: the uniform at a dynamic offset
                bgl = self.device.create_bind_group_layout(entries=[
                    {"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                     "buffer": {"type": types[k], "has_dynamic_offset": k == "uniform"}}
                    for i, k in enumerate(key)])
                self.layouts[key] = (bgl, self.device.create_pipeline_layout(bind_group_layouts=[bgl]))
            bgl, layout = self.layouts[key]
            t0 = time.perf_counter()
            module = self.device.create_shader_module(code=p["code"])
            pipe = self.device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": "main"})
            self.compile_ms[p["id"]] = (time.perf_counter() - t0) * 1e3
            self.pipelines[p["id"]] = (pipe, bgl)
        return self.pipelines[p["id"]]

    def prepare(self, case, pipelines):
        """(buffers, [(pipeline, bind group, dynamic offset, grid)]) for one case, inputs written."""
        dev = self.device
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        bufs = []
        for b in case["buffers"]:
            buf = dev.create_buffer(size=b["size"], usage=usage)
            if b["seed"] is not None:
                data = fill(b["numel"], b["seed"]).astype(NP[b["dtype"]]).tobytes()
                dev.queue.write_buffer(buf, 0, data + bytes(-len(data) % 4))
            bufs.append(buf)
        ds = case["dispatches"]
        params = dev.create_buffer(size=ALIGN * len(ds), usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        steps = []
        for i, d in enumerate(ds):
            raw = bytes.fromhex(d["params"])
            dev.queue.write_buffer(params, i * ALIGN, raw + bytes(-len(raw) % 16))
            pipe, bgl = self.pipeline(pipelines[d["pipeline"]])
            bound = max(16, (len(raw) + 15) & ~15)   # the runtime's: the params rounded to 16 bytes
            entries = [{"binding": 0, "resource": {"buffer": params, "offset": 0, "size": bound}}]
            entries += [{"binding": j + 1, "resource": {"buffer": bufs[k], "offset": 0, "size": case["buffers"][k]["size"]}}
                        for j, k in enumerate(d["buffers"])]
            steps.append((pipe, dev.create_bind_group(layout=bgl, entries=entries), i * ALIGN, d["grid"]))
        return bufs, steps

    def run(self, steps, n, timed):
        """Submit one pass of n copies of steps and wait: (GPU ms or None, wall ms, encoding ms)."""
        te = time.perf_counter()
        enc = self.device.create_command_encoder()
        tw = ({"query_set": self.qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1}
              if timed and self.timestamps else None)
        p = enc.begin_compute_pass(timestamp_writes=tw) if tw else enc.begin_compute_pass()
        for _ in range(n):
            for pipe, bg, off, grid in steps:
                p.set_pipeline(pipe)
                p.set_bind_group(0, bg, [off])
                p.dispatch_workgroups(*grid)
        p.end()
        if tw:
            enc.resolve_query_set(self.qs, 0, 2, self.resolve, 0)
        cmd = enc.finish()
        t0 = time.perf_counter()
        encode = (t0 - te) * 1e3
        self.device.queue.submit([cmd])
        self.wait()
        wall = (time.perf_counter() - t0) * 1e3
        gpu = None
        if tw:
            t = np.frombuffer(self.device.queue.read_buffer(self.resolve), dtype=np.uint64)
            gpu = float(t[1] - t[0]) / 1e6 if t[1] > t[0] else None
        return gpu, wall, encode


def check(case, out_bytes):
    """Max error at the reference's samples over max |ref|, and whether it is within tol."""
    b = next(x for x in case["buffers"] if x["role"] == "out")
    out = np.frombuffer(out_bytes, dtype=NP[b["dtype"]], count=b["numel"]).astype(np.float64)
    c = case["check"]
    idx = c["out_offset"] + np.array(c["rows"])[:, None] * case["N"] + np.array(c["cols"])[None, :]
    err = float(np.abs(out[idx] - np.array(c["ref"])).max()) / c["scale"]
    return err, err <= c["tol"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--out", default="")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--budget", type=float, default=0.02, help="seconds of GPU work per timed submit")
    ap.add_argument("--most", type=int, default=200, help="most copies of a case per submit")
    ap.add_argument("--only", default="", help="cases whose shape/variant contains one of these (comma-separated)")
    args = ap.parse_args()
    data = json.load(open(args.file))
    pipelines = {p["id"]: p for p in data["pipelines"]}
    r = Replayer()
    print(f"native (wgpu-py {wgpu.__version__}): {r.info}; timestamps: {r.timestamps}", flush=True)
    results, t_start = [], time.perf_counter()
    for case in data["cases"]:
        name = f"{case['shape']}/{case['variant']}"
        if args.only and not any(x in name for x in args.only.split(",")):
            continue
        res = dict(shape=case["shape"], variant=case["variant"], resolved=case["resolved"], cls=case["cls"],
                   dtype=case["dtype"])
        try:
            bufs, steps = r.prepare(case, pipelines)
            r.run(steps, 1, False)
            out = next(b for b, x in zip(bufs, case["buffers"]) if x["role"] == "out")
            err, ok = check(case, r.device.queue.read_buffer(out))
            res["err"] = err
            if not ok:
                res["error"] = f"wrong {err:.2e}"
                print(f"  {name:48s} WRONG: max error {err:.2e} of max |ref|", flush=True)
                results.append(res)
                save(args.out, r, data, results)
                continue
            one = r.run(steps, 1, True)
            per = one[0] if one[0] is not None else one[1]
            n = max(1, min(args.most, int(args.budget * 1e3 / max(per, 1e-3))))
            times = [r.run(steps, n, True) for _ in range(args.reps)]
            gpu = [t[0] for t in times if t[0] is not None]
            res.update(n=n, wall_ms=min(t[1] for t in times) / n)
            res["ms"] = min(gpu) / n if gpu else res["wall_ms"]
            res["gpu_ms"] = min(gpu) / n if gpu else None
            # (wgpu-py's Python calls: torchweb's native path encodes in C, native_encoding.py)
            res["encode_us"] = min(t[2] for t in times) * 1e3 / (n * len(steps))
            res["tflops"] = case["flops"] / res["ms"] / 1e9
            res["compile_ms"] = {d["pipeline"]: r.compile_ms.get(d["pipeline"]) for d in case["dispatches"]}
            print(f"  {name:48s} {res['ms']:9.3f} ms {res['tflops']:7.2f} TFLOP/s (wall {res['wall_ms']:.3f}, "
                  f"x{n})  err {err:.1e}", flush=True)
        except Exception as e:   # a kernel that fails to compile or run: reported, not fatal
            res["error"] = str(e).split("\n")[0][:300]
            print(f"  {name:48s} FAILED: {res['error']}", flush=True)
        results.append(res)
        save(args.out, r, data, results)   # as it goes: a run cut short keeps its cases
    print(f"total {time.perf_counter() - t_start:.1f} s", flush=True)


def save(path, r, data, results):
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump(dict(runner="native", wgpu=wgpu.__version__, adapter=r.info, export_adapter=data["adapter"],
                           timestamps=r.timestamps, results=results), f, indent=1)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
