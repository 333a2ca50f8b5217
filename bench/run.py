"""Benchmarks, side by side: torchweb (webgpu) against PyTorch on the same machine.

    python bench/run.py            # full sizes, results to bench/results/<machine>.json
    python bench/run.py --smoke    # tiny sizes, checks the scaffold works (the test command runs it)

Each case times the same op in torchweb and in PyTorch (CUDA if present, else CPU) in one run
and reports the ratio; the results file names the machine and the adapter. Speed is measured
here, never asserted in tests.
"""

import argparse
import json
import os
import platform
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torchweb  # noqa: E402
from timing import best_of, warm_up  # noqa: E402


def _time(fn, sync, repeat, inner=10):
    """Best over `repeat` runs of the mean time of `inner` calls followed by one sync, so
    that the cost of a sync is spread as it is in a real program."""
    warm_up(fn, sync)   # pipelines compiled, buffers pooled
    return best_of(fn, sync, repeat, inner)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    args = ap.parse_args()
    from workloads import cases

    import importlib.util
    torch = None
    if importlib.util.find_spec("torch"):
        import torch
    tdev = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    results = []
    for name, shape, work, make, inner in cases(args.smoke):
        if args.only not in name:
            continue
        torchweb.manual_seed(0)
        fn = make(torchweb, "webgpu")
        ours = _time(fn, torchweb.webgpu.synchronize, 1 if args.smoke else args.repeat, 1 if args.smoke else inner)
        row = {"case": name, "shape": shape, "torchweb_s": ours}
        if torch is not None:
            torch.manual_seed(0)
            tfn = make(torch, tdev)
            tsync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
            theirs = _time(tfn, tsync, 1 if args.smoke else args.repeat, 1 if args.smoke else inner)
            row.update({"torch_device": tdev, "torch_s": theirs, "torch_over_torchweb": theirs / ours})
        if work and any(k in name for k in ("matmul", "bmm", "linear")):
            row["torchweb_tflops"] = work / ours / 1e12
        results.append(row)
        print(json.dumps(row))
    report = {
        "machine": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
        "adapter": torchweb.webgpu.adapter_info(), "torch": getattr(torch, "__version__", None),
        "lazy_fusion": os.environ.get("TORCHWEB_LAZY", "1") != "0",
        "smoke": args.smoke, "results": results,
    }
    out = args.out or os.path.join(os.path.dirname(__file__), "results",
                                   ("smoke-" if args.smoke else "") + platform.node() + ".json")
    if args.smoke:
        out = os.path.join("/tmp", os.path.basename(out))  # smoke runs are not results
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print("wrote", out)


if __name__ == "__main__":
    main()
