"""Where a call's time goes when the GPU waits for Python, and which flush policy hides it.

For cases of bench/workloads.py: the time of `inner` calls plus a sync under several policies
(runtime.FLUSH_WORK_BYTES / FLUSH_AFTER_S; the native driver's raw C calls per dispatch and
SUBMIT_EVERY; runtime.REUSE_PARAMS, uniforms uploaded only when they changed; feed.FEED_GPU,
flushing as the GPU is estimated to run dry), and, with flushes held back, the split into recording (Python), flush (encoding +
submit through the driver) and wait (the GPU finishing). PyTorch on the same device in the same
run. First, the driver's cost of one flush of n dispatches per policy.

    python3 bench/flush_policy.py [--only NAME,NAME] [--out FILE]     # on the GPU machine
"""

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torchweb  # noqa: E402
from timing import best_of, warm_up  # noqa: E402
from torchweb.backends.webgpu import runtime as R  # noqa: E402

# name -> (FLUSH_WORK_BYTES, IDLE_START_BYTES, FLUSH_AFTER_S, raw C calls per dispatch,
# SUBMIT_EVERY, runtime.REUSE_PARAMS, feed.FEED_GPU)
POLICIES = {
    "before": (1 << 62, 1 << 62, 1e-3, False, 1 << 30, False, False),
    "raw_sub64_work512M_idle16M": (512 << 20, 16 << 20, 1e-3, True, 64, False, False),
    "raw_sub64_work128M_idle16M": (128 << 20, 16 << 20, 1e-3, True, 64, False, False),
    "reuse": (512 << 20, 16 << 20, 1e-3, True, 64, True, False),
    "reuse_feed": (512 << 20, 16 << 20, 1e-3, True, 64, True, True),
    "reuse_feed_work128M": (128 << 20, 16 << 20, 1e-3, True, 64, True, True),
    "reuse_feed_work2G": (2 << 30, 16 << 20, 1e-3, True, 64, True, True),
}
DEFAULT = "reuse_feed"
CASES = ("add_f32_64M", "sum_f32_64M", "rowsum_f32_8192x8192", "softmax_f32_4096x4096",
         "matmul_f32_1024", "bmm_96x256x64x256", "linear_4096x384_1536",
         "chain200_f32_1024", "mlp_784_256_10_adam_step_b64", "compiled_mlp_784_256_10_adam_step_b64",
         "gpt_train_step_6L_384_T256_B16", "compiled_gpt_train_step_6L_384_T256_B16")


def _apply(policy):
    from torchweb.backends.webgpu import native_encoding as NE
    from torchweb.backends.webgpu import feed
    work, idle, after, raw, submit, reuse, feeding = POLICIES[policy]
    R.FLUSH_WORK_BYTES, R.IDLE_START_BYTES, R.FLUSH_AFTER_S, NE.SUBMIT_EVERY = work, idle, after, submit
    R.REUSE_PARAMS, feed.FEED_GPU = reuse, feeding
    drv = R.get_runtime().driver
    if not hasattr(drv, "_c_encoding"):
        drv._c_encoding = drv._encoding
    drv._encoding = drv._c_encoding if raw else (lambda: NE.PyEncoding(drv.device))


def _flush_costs(repeat):
    """Thread CPU time of one flush of n dispatches (x.sum(1) on 64x64), per policy: the
    per-flush and per-dispatch costs of the native driver on this machine."""
    from torchweb.backends.webgpu import lazy
    rt = R.get_runtime()
    x = torchweb.randn(64, 64, device="webgpu")
    out = {}
    for policy in ("before", "raw_sub64_work512M_idle16M", "reuse"):
        _apply(policy)
        R.FLUSH_WORK_BYTES, R.IDLE_START_BYTES, R.FLUSH_AFTER_S = 1 << 62, 1 << 62, 1e9
        for n in (1, 10, 100, 1000):
            best = float("inf")
            for _ in range(repeat + 1):
                ys = [x.sum(1) for _ in range(n)]
                lazy.realize_all()
                t0 = time.thread_time()
                rt.flush()
                best = min(best, time.thread_time() - t0)
                rt.driver.wait()
                del ys
            out[f"{policy}_n{n}_us"] = best * 1e6
    _apply(DEFAULT)
    print(json.dumps({"flush_costs": out}), flush=True)
    return out


def _best(fn, sync, inner, repeat):
    warm_up(fn, sync)
    return best_of(fn, sync, repeat, inner)[0]


def _split(fn, inner, repeat):
    """Per call: (record, flush, wait) seconds with every flush held until the sync."""
    rt = R.get_runtime()
    saved = R.FLUSH_WORK_BYTES, R.IDLE_START_BYTES, R.FLUSH_AFTER_S
    R.FLUSH_WORK_BYTES, R.IDLE_START_BYTES, R.FLUSH_AFTER_S = 1 << 62, 1 << 62, 1e9
    try:
        fn()
        torchweb.webgpu.synchronize()
        best = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            from torchweb.backends.webgpu import lazy
            lazy.realize_all()
            t1 = time.perf_counter()
            rt.flush()
            t2 = time.perf_counter()
            rt.driver.wait()
            t3 = time.perf_counter()
            row = ((t1 - t0) / inner, (t2 - t1) / inner, (t3 - t2) / inner)
            if best is None or sum(row) < sum(best):
                best = row
        return best
    finally:
        R.FLUSH_WORK_BYTES, R.IDLE_START_BYTES, R.FLUSH_AFTER_S = saved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated substrings of case names")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from workloads import cases
    import torch
    tdev = "cuda" if torch.cuda.is_available() else "cpu"
    tsync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
    rows = []
    costs = _flush_costs(args.repeat)
    for name, shape, work, make, inner in cases(False):
        if name not in CASES or not any(o in name for o in args.only.split(",")):
            continue
        torchweb.manual_seed(0)
        _apply(DEFAULT)
        fn = make(torchweb, "webgpu")
        row = {"case": name, "inner": inner}
        rec, fl, wa = _split(fn, inner, args.repeat)
        row["split_ms"] = {"record": rec * 1e3, "flush": fl * 1e3, "wait": wa * 1e3}
        for pname in POLICIES:
            _apply(pname)
            row[pname + "_ms"] = _best(fn, torchweb.webgpu.synchronize, inner, args.repeat) * 1e3
        _apply(DEFAULT)
        del fn
        torch.manual_seed(0)
        tfn = make(torch, tdev)
        row["torch_ms"] = _best(tfn, tsync, inner, args.repeat) * 1e3
        del tfn
        for pname in POLICIES:
            row[pname + "_ratio"] = row["torch_ms"] / row[pname + "_ms"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    report = {"machine": platform.node(), "adapter": torchweb.webgpu.adapter_info(),
              "torch": torch.__version__, "torch_device": tdev, "policies": POLICIES,
              "flush_costs_us": costs, "results": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
