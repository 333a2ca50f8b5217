"""Build the PyScript page's files: site/pyscript.html runs torchweb under PyScript, offline.

Fetches npm `@pyscript/core` (`npm pack`, once, into the gitignored .cache/pyscript/), copies its
dist/ into site/pyscript/, makes sure the local Pyodide (site/pyodide/) and the torchweb wheel
(site/wheels/) are there, and writes site/pyscript.config.json naming the wheel (its file name
carries the version, so the config is built, not committed). Everything it writes is gitignored.

    python scripts/build_pyscript.py [--no-wheel] [--pyodide-dir DIR]

Then serve site/ (scripts/serve.py) and open http://127.0.0.1:8000/pyscript.html
(or pyscript.html?worker for the worker variant).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_page  # noqa: E402
import wheel  # noqa: E402

VERSION = "0.7.31"
REPO = wheel.REPO
SITE = os.path.join(REPO, "site")
CACHE = os.path.join(REPO, ".cache", "pyscript")


def fetch_core(version=VERSION):
    """The path of an unpacked @pyscript/core package (its dist/ inside), fetched once."""
    dest = os.path.join(CACHE, f"core-{version}")
    if os.path.exists(os.path.join(dest, "dist", "core.js")):
        return dest
    os.makedirs(CACHE, exist_ok=True)
    tgz = os.path.join(CACHE, f"pyscript-core-{version}.tgz")
    if not os.path.exists(tgz):
        r = subprocess.run(["npm", "pack", "--silent", f"@pyscript/core@{version}"], cwd=CACHE,
                           capture_output=True, text=True)
        if r.returncode or not os.path.exists(tgz):
            raise SystemExit(f"npm pack @pyscript/core@{version} failed:\n{r.stdout}\n{r.stderr}")
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(tgz) as t:
        t.extractall(tmp, filter="data")
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(os.path.join(tmp, "package"), dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def build(site=SITE, build_wheel=True, pyodide_dir=None):
    """Write site/pyscript/ (PyScript's dist) and site/pyscript.config.json; returns the config."""
    core = fetch_core()
    dest = os.path.join(site, "pyscript")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(os.path.join(core, "dist"), dest, ignore=shutil.ignore_patterns("*.map"))
    run_page.ensure_pyodide(site, pyodide_dir)
    if build_wheel or not os.path.exists(os.path.join(site, "wheels", "latest.json")):
        wheel.publish(wheel.build(), site)
    with open(os.path.join(site, "wheels", "latest.json")) as f:
        whl = json.load(f)["wheel"]
    # Paths are relative to the page and to this file alike (both sit in site/).
    # "passthrough" hands the wheel's URL to Pyodide's loadPackage: no micropip needed offline.
    config = {"interpreter": "./pyodide/pyodide.mjs",
              "packages": [f"./wheels/{whl}"],
              "packages_cache": "passthrough"}
    with open(os.path.join(site, "pyscript.config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return config


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-wheel", action="store_true", help="keep the wheel already in site/wheels/")
    ap.add_argument("--pyodide-dir", help="an untarred npm pyodide package (default node_modules/pyodide)")
    args = ap.parse_args()
    print(json.dumps(build(build_wheel=not args.no_wheel, pyodide_dir=args.pyodide_dir)))


if __name__ == "__main__":
    main()
