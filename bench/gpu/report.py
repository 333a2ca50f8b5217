"""The GPU bench's results file and tables: bench/gpu/run.sh's two parts (gpu-native.json from
bench/run.py, gpu-browser.json from bench/gpu/dawn.mjs) in one file named after the GPU, with the
GPU, its driver, Dawn, node and Pyodide, and a Markdown table of each part (the browser part's
also as issue 21's target: torchweb, the fastest peer, the floor, torchweb / max(0.5 x peer, floor)).

    python3 bench/gpu/report.py DIR        (writes DIR/gpu-<gpu>.json and prints the tables)"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "browser"))


def gpu():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        name, driver = [x.strip() for x in r.stdout.splitlines()[0].split(",")]
        return {"name": name, "driver": driver}
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return {"name": "unknown", "driver": None}


def native_table(native):
    lines = ["| case | torchweb ms | PyTorch ms | PyTorch / torchweb |", "| --- | --- | --- | --- |"]
    for r in native["results"]:
        lines.append(f"| {r['case']} | {r['torchweb_s'] * 1e3:.3f} | {r['torch_s'] * 1e3:.3f} ({r['torch_device']}) | "
                     f"{r['torch_over_torchweb']:.2f} |")
    return "\n".join(lines)


def main():
    folder = sys.argv[1]
    report = {"gpu": gpu()}
    native_file, browser_file = os.path.join(folder, "gpu-native.json"), os.path.join(folder, "gpu-browser.json")
    if os.path.exists(native_file):
        with open(native_file) as f:
            report["native"] = json.load(f)
        print("\n## Native (wgpu-native, Vulkan) against PyTorch\n\n" + native_table(report["native"]))
    if os.path.exists(browser_file):
        import run as browser_run   # bench/browser/run.py: the browser suite's summary and table
        with open(browser_file) as f:
            page = browser_run.summarize(json.load(f))
        tw = page["libraries"].get("torchweb", {})
        page["versions"] = {**page.get("runtime", {}), "pyodide": tw.get("pyodide"), "python": tw.get("python")}
        report["browser"] = page
        print("\n## Browser path (Pyodide on Dawn in node) against the JS peers and the floor\n\n" + browser_run.table(page))
        print("\n## Issue 21's target: torchweb at most max(0.5 x the fastest peer, the floor)\n\n" +
              browser_run.target_table(page))
    slug = re.sub(r"[^a-z0-9]+", "-", report["gpu"]["name"].lower()).strip("-")
    out = os.path.join(folder, f"gpu-{slug}.json")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
