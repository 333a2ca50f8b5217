"""The browser suite of issue 9: torchweb (Pyodide + WebGPU) against TensorFlow.js (WebGPU backend),
webgpu-torch and jax-js, in one headless Chromium session on one WebGPU adapter.

    .venv/bin/python bench/browser/run.py [--smoke] [--out FILE] [--reps N] [--only NAME]

It installs the npm peers into bench/browser/node_modules if missing, builds the torchweb wheel
and copies Pyodide's core into bench/browser/build/ (gitignored), writes seeded inputs and
PyTorch-CPU's expected results there (data.py), serves bench/browser/ on 127.0.0.1, opens
index.html, and writes a JSON file (machine, Chromium, adapter, versions, per workload per
library the median and min of the timed repetitions after warm-up, or "wrong"/"unsupported"
with a reason) and prints a Markdown table. `--smoke`: tiny sizes, 1 repetition (CI)."""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.join(HERE, "build")
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, HERE)
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
import run_page  # noqa: E402
import serve  # noqa: E402
import wheel  # noqa: E402

PEERS = ("@tensorflow/tfjs", "@tensorflow/tfjs-backend-webgpu", "webgpu-torch", "@jax-js/jax")
LIBS = ("torchweb", "torchweb-compile", "tfjs", "jax-js", "webgpu-torch")


def ensure_npm():
    """npm install the pinned peers (package.json) unless node_modules has them."""
    if all(os.path.exists(os.path.join(HERE, "node_modules", p, "package.json")) for p in PEERS):
        return
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", HERE], check=True, cwd=HERE)


def npm_versions():
    out = {}
    for p in PEERS:
        with open(os.path.join(HERE, "node_modules", p, "package.json")) as f:
            out[p] = json.load(f)["version"]
    return out


def git_state():
    """The commit the wheel was built from, with "-dirty" when the working tree had changes."""
    r = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=REPO)
    return r.stdout.strip() or None


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    # the load average says how much else the cores were doing (SwiftShader runs on them)
    return {"host": platform.node(), "cpu": model or platform.processor(), "cores": os.cpu_count(),
            "platform": platform.platform(), "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()]}


def _ms(x):
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def table(report):
    """Markdown: one row per workload, one column per library (median and min of the timed
    repetitions, ms), and torchweb's median over the fastest checked peer's; notes below."""
    libs = [lib for lib in LIBS if lib in report["libraries"]]
    lines = ["| workload | " + " | ".join(f"{lib} ms, median (min)" for lib in libs) + " | torchweb / fastest peer |",
             "| --- |" + " --- |" * (len(libs) + 1)]
    notes = []
    for w in report["workloads"]:
        cells = []
        for lib in libs:
            r = w["results"].get(lib, {})
            cell = f"{_ms(r['median_ms'])} ({_ms(r['min_ms'])})" if r.get("status") == "ok" else r.get("status", "-")
            if r.get("note") or r.get("status") in ("wrong", "unsupported"):
                why = "; ".join(filter(None, (r.get("reason"), r.get("note"))))
                notes.append(f"{lib}, {w['name']}: {why}")
                cell += f" [{len(notes)}]"
            cells.append(cell)
        ratio = w.get("torchweb_over_fastest_peer")
        cells.append(f"{ratio:.2f} ({w['torchweb_variant']} / {w['fastest_peer']})" if ratio else "-")
        lines.append(f"| {w['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines + [""] + [f"[{i}] {n}" for i, n in enumerate(notes, 1)])


def summarize(page):
    """Add the ratio of torchweb's time (the faster of eager and torch.compile, medians) to the
    fastest checked peer's to each workload."""
    for w in page["workloads"]:
        ok = {k: r["median_ms"] for k, r in w["results"].items() if r["status"] == "ok"}
        ours = {k: v for k, v in ok.items() if k.startswith("torchweb")}
        peers = {k: v for k, v in ok.items() if not k.startswith("torchweb")}
        if ours and peers:
            mine, best = min(ours, key=ours.get), min(peers, key=peers.get)
            w["torchweb_variant"], w["fastest_peer"] = mine, best
            w["torchweb_over_fastest_peer"] = ours[mine] / peers[best]
    return page


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, 1 repetition (CI)")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (default 5; smoke 1)")
    ap.add_argument("--warm", type=int, default=None, help="warm-up repetitions (default 2; smoke 1)")
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out", default=None, help="results file (default bench/results/browser-<adapter architecture>-<host>.json)")
    ap.add_argument("--table", metavar="FILE", help="only print the Markdown table of a results file")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            print(table(json.load(f)))
        return
    reps = args.reps or (1 if args.smoke else 5)
    warm = args.warm or (1 if args.smoke else 2)

    t_start = time.monotonic()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    load_before = [round(x, 2) for x in os.getloadavg()]
    ensure_npm()
    import data
    manifest = data.make(BUILD, args.smoke)
    run_page.ensure_pyodide(BUILD)
    built_from = git_state()
    whl = wheel.publish(wheel.build(os.path.join(BUILD, "dist")), site_dir=BUILD)
    print(f"[bench] inputs, Pyodide and wheel ready in {time.monotonic() - t_start:.1f} s", flush=True)
    server, base = serve.start(HERE)
    driver = run_page.chrome()
    try:
        url = f"{base}index.html?reps={reps}&warm={warm}&only={args.only}&libs={args.libs}"
        status, text = run_page.wait_for_page(driver, url, args.timeout, echo=True)
        page = driver.execute_script("return globalThis.benchResult || null;")
        chromium = driver.capabilities.get("browserVersion")
        console = run_page.console_log(driver) if status != "DONE" else ""
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    if status != "DONE" or not page:
        print(f"\n[bench] page {status}\n{console}", file=sys.stderr)
        sys.exit(1)

    versions = {"torchweb": page["libraries"].get("torchweb", {}).get("torchweb"),
                "torchweb_wheel": os.path.basename(whl), "torchweb_git": built_from,
                "pyodide": page["libraries"].get("torchweb", {}).get("pyodide"),
                **npm_versions()}
    report = {
        "date_started": started, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {**machine(), "load_avg_1_5_15_at_start": load_before}, "browser": {"name": "Chromium", "version": chromium, "userAgent": page["userAgent"]},
        "adapter": page["adapter"], "versions": versions, "smoke": args.smoke,
        "repetitions": {"warm_up": warm, "timed": reps, "training_warm_up_checked": next(w.get("warm") for w in manifest["workloads"] if w["kind"] == "gpt"),
                        "generation_warm_up": next((w.get("warm") for w in manifest["workloads"] if w["kind"] == "lm"), None)},
        "reference": f"PyTorch {manifest['torch_reference']} on the CPU, same seeded inputs (bench/browser/data.py)",
        "libraries": page["libraries"], "workloads": summarize(page)["workloads"],
        "seconds": round(time.monotonic() - t_start, 1),
    }
    arch = "".join(c if c.isalnum() else "-" for c in (page["adapter"].get("architecture") or "adapter"))
    out = args.out or os.path.join(REPO, "bench", "results",
                                   ("smoke-" if args.smoke else "") + f"browser-{arch}-{platform.node()}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\n{table(report)}\n\nadapter: {report['adapter'].get('vendor')} / {report['adapter'].get('architecture')}"
          f" (fallback {report['adapter'].get('fallback')}), Chromium {chromium}; written to {out}")


if __name__ == "__main__":
    main()
