"""The browser suite of issue 9: torchweb (Pyodide + WebGPU) against TensorFlow.js (WebGPU backend),
webgpu-torch and jax-js, in one headless Chromium session on one WebGPU adapter, with the
platform's floor beside them (peers/floor.mjs: the same readback or round trip in plain WebGPU JS).

    .venv/bin/python bench/browser/run.py [--smoke] [--out FILE] [--reps N] [--only NAME]

It installs the npm peers into bench/browser/node_modules if missing, builds the torchweb wheel
and copies Pyodide's core into bench/browser/build/ (gitignored), writes seeded inputs and
PyTorch-CPU's expected results there (data.py), serves bench/browser/ on 127.0.0.1, opens
index.html, and writes a JSON file (machine, Chromium, adapter, versions, per workload per
library the median and min of the timed repetitions after warm-up, or "wrong"/"unsupported"
with a reason) and prints two Markdown tables: every library's times, and issue 21's target
(torchweb / max(0.5 x the fastest peer, the floor), met or not). `--smoke`: tiny sizes, 1
repetition (CI)."""

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
LIBS = ("torchweb", "torchweb-compile", "tfjs", "jax-js", "webgpu-torch", "floor")   # floor: peers/floor.mjs


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
    """Markdown: one row per workload, one column per library and the floor (median and min of
    the timed repetitions, ms), and torchweb's median over the fastest checked peer's; notes below."""
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


def target_table(report):
    """Markdown: issue 21's target per workload: torchweb's time (the faster of eager and
    compiled) at most max(0.5 x the fastest peer's, the platform's floor), medians in ms."""
    lines = ["| workload | torchweb ms | fastest peer ms | floor ms | target ms = max(0.5 x peer, floor) | torchweb / target |",
             "| --- | --- | --- | --- | --- | --- |"]
    for w in report["workloads"]:
        ours = w.get("torchweb_ms")
        peer = f"{_ms(w['fastest_peer_ms'])} ({w['fastest_peer']})" if w.get("fastest_peer_ms") else "-"
        floor = _ms(w["floor_ms"]) if w.get("floor_ms") else "-"
        target = _ms(w["target_ms"]) if w.get("target_ms") else "-"
        if ours and w.get("target_ms"):
            verdict = f"{w['torchweb_over_target']:.2f} {'met' if w['target_met'] else 'not met'}"
        else:
            verdict = "-"
        mine = f"{_ms(ours)} ({w['torchweb_variant']})" if ours else "-"
        lines.append(f"| {w['name']} | {mine} | {peer} | {floor} | {target} | {verdict} |")
    return "\n".join(lines)


def floor_ms(w):
    """The floor's time (peers/floor.mjs): its median; for a Python list, at least the bytes read
    into a Float32Array plus the Python floor (the same bytes into a list in Pyodide)."""
    f = w["results"].get("floor", {})
    if f.get("status") != "ok":
        return None
    parts = f.get("parts_ms") or {}
    if "python_tolist" in parts and "float32array" in parts:
        return max(f["median_ms"], parts["float32array"] + parts["python_tolist"])
    return f["median_ms"]


def summarize(page):
    """Add to each workload torchweb's time (the faster of eager and torch.compile, medians), the
    fastest checked peer's, their ratio, the floor and issue 21's target: torchweb at most
    max(0.5 x the fastest peer's time, the floor)."""
    for w in page["workloads"]:
        ok = {k: r["median_ms"] for k, r in w["results"].items() if r["status"] == "ok"}
        ours = {k: v for k, v in ok.items() if k.startswith("torchweb")}
        peers = {k: v for k, v in ok.items() if not k.startswith("torchweb") and k != "floor"}
        floor = floor_ms(w)
        if ours:
            mine = min(ours, key=ours.get)
            w["torchweb_variant"], w["torchweb_ms"] = mine, ours[mine]
        if peers:
            best = min(peers, key=peers.get)
            w["fastest_peer"], w["fastest_peer_ms"] = best, peers[best]
        if ours and peers:
            w["torchweb_over_fastest_peer"] = w["torchweb_ms"] / w["fastest_peer_ms"]
        if floor is not None:
            w["floor_ms"] = floor
        if peers:   # (no peer, no target: generation is torchweb's alone)
            w["target_ms"] = max(0.5 * w["fastest_peer_ms"], floor or 0.0)
            if ours:
                w["torchweb_over_target"] = w["torchweb_ms"] / w["target_ms"]
                w["target_met"] = w["torchweb_over_target"] <= 1.0
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
            report = summarize(json.load(f))
        print(table(report) + "\n\n" + target_table(report))
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
    print(f"\n{table(report)}\n\n{target_table(report)}\n\nadapter: {report['adapter'].get('vendor')} / {report['adapter'].get('architecture')}"
          f" (fallback {report['adapter'].get('fallback')}), Chromium {chromium}; written to {out}")


if __name__ == "__main__":
    main()
