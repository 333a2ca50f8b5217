"""Build torchweb's wheel and put it where the pages load it (site/wheels/ + latest.json).

The wheel comes from pyproject.toml through pip, built in a clean copy of the sources (no
build isolation first, so it works offline when the build backend is installed; then with
isolation). Run as a script it also readies site/pyodide/ (from node_modules/pyodide).
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RUNTIME_JS = "torchweb-runtime.mjs"   # the wheel's torchweb/_js/runtime.mjs, served beside it


def build(out_dir=os.path.join(REPO, "wheels")):
    """The path of a freshly built torchweb wheel in out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "torchweb-*.whl")):
        os.remove(old)
    # Build from a clean copy: setuptools' build/ in the tree keeps deleted modules around
    # and would ship them; a copy also leaves the working tree untouched.
    with tempfile.TemporaryDirectory(prefix="torchweb-build-") as tmp:
        for name in ("pyproject.toml", "README.md", "LICENSE", "setup.cfg"):
            if os.path.exists(os.path.join(REPO, name)):
                shutil.copy2(os.path.join(REPO, name), tmp)
        shutil.copytree(os.path.join(REPO, "src"), os.path.join(tmp, "src"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        base = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out_dir, tmp]
        r = subprocess.run(base[:4] + ["--no-build-isolation"] + base[4:], capture_output=True, text=True)
        if r.returncode:   # the build backend is not installed here: let pip fetch it
            r = subprocess.run(base, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"wheel build failed:\n{r.stdout}\n{r.stderr}")
    wheels = glob.glob(os.path.join(out_dir, "torchweb-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one torchweb wheel in {out_dir}, found {wheels}")
    _check_has_js(wheels[0])
    return wheels[0]


def _check_has_js(path):
    with zipfile.ZipFile(path) as z:
        if "torchweb/_js/runtime.mjs" not in z.namelist():
            raise RuntimeError(f"{path} lacks torchweb/_js/runtime.mjs: add it to the package data "
                               f"in pyproject.toml, or the browser driver cannot start")


def publish(wheel, site_dir=os.path.join(REPO, "site")):
    """Copy the wheel to site/wheels/ and name it in latest.json, which site/boot.mjs reads; its
    runtime.mjs goes beside it, so pages under a CSP import it from their own origin (no eval)."""
    dest = os.path.join(site_dir, "wheels")
    os.makedirs(dest, exist_ok=True)
    for old in glob.glob(os.path.join(dest, "*.whl")):
        os.remove(old)
    shutil.copy2(wheel, dest)
    with zipfile.ZipFile(wheel) as z, open(os.path.join(dest, RUNTIME_JS), "wb") as f:
        f.write(z.read("torchweb/_js/runtime.mjs"))
    with open(os.path.join(dest, "latest.json"), "w") as f:
        json.dump({"wheel": os.path.basename(wheel), "runtime": RUNTIME_JS}, f)
    return os.path.join(dest, os.path.basename(wheel))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_page import ensure_pyodide
    import build_site
    import site_data
    ensure_pyodide()
    site_data.publish()
    build_site.build()   # the Playground's editor bundle and the docs pages
    print(publish(build()))
