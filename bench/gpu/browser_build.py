"""Fill bench/browser/build for the browser suite without Chromium (bench/gpu/dawn.mjs runs the
page in node on Dawn): the seeded inputs and PyTorch's expected results at the given sizes, the
torchweb wheel, Pyodide's core.

    python3 bench/gpu/browser_build.py [--profile gpu|full|smoke] [--pyodide-dir DIR]

The GPU machine has PyTorch (the oracle) and numpy; the wheel is built from src/ here."""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BROWSER = os.path.join(REPO, "bench", "browser")
BUILD = os.path.join(BROWSER, "build")
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, BROWSER)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="gpu", help="data.SIZES key (gpu: nanoGPT's shape, 1024/4096 matmuls)")
    ap.add_argument("--pyodide-dir", default=None, help="an untarred npm pyodide package (else node_modules/pyodide)")
    args = ap.parse_args()
    import data
    import run_page
    import wheel
    data.make(BUILD, args.profile == "smoke", args.profile)
    run_page.ensure_pyodide(BUILD, args.pyodide_dir)
    whl = wheel.publish(wheel.build(os.path.join(BUILD, "dist")), site_dir=BUILD)
    print(f"[gpu bench] {BUILD}: {args.profile} inputs, Pyodide, {os.path.basename(str(whl))}")


if __name__ == "__main__":
    main()
