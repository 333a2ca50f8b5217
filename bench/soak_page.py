"""Long runs in the page (issue 22): the browser tier's soak scripts for 1000+ steps, with figures.

Runs tests/browser/scripts/soak_*.py (an MLP and the GPT demo's model, each eagerly and under
torch.compile) in Pyodide in headless Chromium (WebGPU on SwiftShader) through
bench/soak_page/index.html, then prints, per run, the snapshot after warm-up and the one at the
end: GPU bytes (memory_allocated, memory_reserved), live GPU buffers and bind groups
(runtime.mjs's tables), live PyProxies and JS references (Pyodide's own counts), Python's
objects, the wasm heap and the JS heap (after a forced GC; on the page's thread only). With
--worker the scripts run in the demos' module worker and the page reports its own frame times
(requestAnimationFrame deltas) meanwhile. CI runs the same scripts for 160 steps
(tests/browser: script/soak_*).

    python bench/soak_page.py [--steps 1000] [--scripts soak_mlp,soak_gpt] [--worker] [--json OUT]
"""

import argparse
import json
import os
import sys
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "tests", "browser"))
import run_page  # noqa: E402
import wheel  # noqa: E402
from run_browser_tests import open_page  # noqa: E402
from soak_stats import grew  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000, help="training steps per run (warm-up included)")
    ap.add_argument("--scripts", default="soak_mlp,soak_gpt")
    ap.add_argument("--worker", action="store_true", help="train in a module worker; measure frame times")
    ap.add_argument("--no-build", action="store_true", help="use the wheel already in site/wheels/")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", help="write the page's figures here")
    args = ap.parse_args()

    run_page.ensure_pyodide(run_page.SITE)
    if not args.no_build:
        wheel.publish(wheel.build())
    query = {"steps": args.steps, "scripts": args.scripts}
    if args.worker:
        query["worker"] = "1"
    status, _, summary, console = open_page("bench/soak_page/index.html?" + urllib.parse.urlencode(query),
                                            args.timeout, "torchwebSoak")
    if status != "DONE" or not summary:
        print(f"\n[soak] page {status}\n{console}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0 if report(summary) else 1


def report(s):
    where = "a module worker" if s["worker"] else "the page's thread"
    print(f"\n[soak] {s['steps']} steps per run in {where}, {s['seconds']:.0f} s in all")
    flat = True
    for script, out in s["scripts"].items():
        for run, fig in out["runs"].items():
            b, a, n = fig["before"], fig["after"], fig["steps"]
            bad = grew(b, a, n)
            flat = flat and not bad
            print(f"  {run}: {n} steps after warm-up, {'flat' if not bad else 'GREW'}"
                  + (f"; torch.compile: {fig['compile']}" if fig.get("compile") else ""))
            for k in b:
                print(f"    {k:15} {b[k]:>12} -> {a.get(k):>12}")
            for line in bad:
                print(f"    GREW: {line}")
    if s["frames"]:
        f = s["frames"]
        print(f"  frame times of the page's thread: {f['frames']} frames, p50 {f['p50']:.1f} ms, "
              f"p95 {f['p95']:.1f} ms, p99 {f['p99']:.1f} ms, max {f['max']:.1f} ms, "
              f"{f['over50ms']} over 50 ms")
    return flat


if __name__ == "__main__":
    sys.exit(main())
