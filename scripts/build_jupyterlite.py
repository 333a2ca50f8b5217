"""Build a JupyterLite site (site/lite/) whose Pyodide kernel runs torchweb on WebGPU, offline.

Build dependencies (installed into .venv when missing): PyPI jupyterlite-core==0.8.6,
jupyterlite-pyodide-kernel==0.8.6 and jupyter_server (the build refuses custom content without
it). The lite dir .cache/jupyterlite/lite/ gets:
  - static/pyodide/: the local Pyodide core (site/pyodide/) plus the wheels the kernel loads from
    Pyodide's lockfile (micropip, ipython and its dependencies, jedi, parso; tqdm for course
    notebook 2's progress bar), fetched from PyPI with pip. Pyodide rebuilds those wheels, so
    the PyPI files differ in sha256 from pyodide-lock.json: the copied lockfile gets each added
    file's real sha256 and file name.
    The build sees static/pyodide/ and points the kernel's pyodideUrl at it.
  - pypi/: the torchweb wheel and `comm` (the kernel needs it), for `%pip install torchweb`.
  - jupyter-lite.json: disablePyPIFallback (nothing from the network) and exposeAppInBrowser
    (window.jupyterapp, to drive the page from a test).
Contents: site/notebooks/: train.ipynb and the course, 1_tensors_autograd.ipynb,
2_train_cnn.ipynb (digits CNN with a live loss curve: this Pyodide has no matplotlib, so an SVG
redrawn in place) and 3_finetune_from_url.ipynb. The course reads site/data/digits.json and
site/data/digits_cnn_0to4.pt (scripts/site_data.py, scripts/pretrain_digits_cnn.py: needs the
host's torch), published here. Everything written is gitignored.

    python scripts/build_jupyterlite.py [--no-wheel]

Then serve site/ (scripts/serve.py; no COOP/COEP headers: with them the kernel switches to a
SharedArrayBuffer bridge that leaves cells hanging) and open
http://127.0.0.1:8000/lite/lab/index.html?path=train.ipynb
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pretrain_digits_cnn  # noqa: E402
import run_page  # noqa: E402
import wheel  # noqa: E402

REPO = wheel.REPO
SITE = os.path.join(REPO, "site")
CACHE = os.path.join(REPO, ".cache", "jupyterlite")
LITE_DIR = os.path.join(CACHE, "lite")
OUTPUT = os.path.join(SITE, "lite")
BUILD_DEPS = ["jupyterlite-core==0.8.6", "jupyterlite-pyodide-kernel==0.8.6", "jupyter_server"]
# Lockfile packages the kernel imports at start, with their dependencies (resolved from the lockfile)
KERNEL_PACKAGES = ["micropip", "ipython", "jedi", "parso"]
# Lockfile packages the course notebooks import: the kernel loads an import it finds in the
# lockfile from the local Pyodide (never piplite), so their wheels must be there
COURSE_PACKAGES = ["tqdm"]
PIPLITE_EXTRA = ["comm"]
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def _norm(name):
    return name.lower().replace("-", "_").replace(".", "_")


def ensure_build_deps():
    try:
        import jupyter_server  # noqa: F401
        import jupyterlite_core  # noqa: F401
        import jupyterlite_pyodide_kernel  # noqa: F401
        return
    except ImportError:
        pass
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *BUILD_DEPS], check=True)


def _pip_download(specs, dest, python="3.14"):
    """Pure-Python wheels for specs ("name==version") into dest; their paths by normalized name."""
    os.makedirs(dest, exist_ok=True)
    want = {_norm(s.split("==")[0]): s for s in specs}
    have = {}
    for path in glob.glob(os.path.join(dest, "*.whl")):
        name, version = os.path.basename(path).split("-")[:2]
        have[(_norm(name), version)] = path
    missing = [s for s in specs if (_norm(s.split("==")[0]), s.split("==")[1]) not in have] \
        if all("==" in s for s in specs) else specs
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                        "--no-deps", "--only-binary=:all:", "--python-version", python,
                        "--platform", "any", "-d", dest, *missing], check=True)
    out = {}
    for path in glob.glob(os.path.join(dest, "*.whl")):
        name, version = os.path.basename(path).split("-")[:2]
        n = _norm(name)
        if n in want and ("==" not in want[n] or want[n].split("==")[1] == version):
            out[n] = path
    lost = set(want) - set(out)
    if lost:
        raise SystemExit(f"pip download did not give wheels for {sorted(lost)}")
    return out


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_pyodide(dest, pyodide_dir=None):
    """The local Pyodide core plus the kernel's lockfile packages, with a lockfile to match."""
    core = run_page.ensure_pyodide(SITE, pyodide_dir)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(core, dest)
    lock_path = os.path.join(dest, "pyodide-lock.json")
    with open(lock_path) as f:
        lock = json.load(f)
    packages = lock["packages"]
    by_norm = {_norm(k): k for k in packages}
    needed = []

    def add(name):
        key = by_norm[_norm(name)]
        if key in needed:
            return
        needed.append(key)
        for dep in packages[key]["depends"]:
            add(dep)

    for name in KERNEL_PACKAGES + COURSE_PACKAGES:
        add(name)
    for key in needed:
        if packages[key].get("package_type", "package") != "package" or \
                not packages[key]["file_name"].endswith("-none-any.whl"):
            raise SystemExit(f"{key} in pyodide-lock.json is not a pure Python wheel: "
                             f"{packages[key]['file_name']}")
    wheels = _pip_download([f"{key}=={packages[key]['version']}" for key in needed],
                           os.path.join(CACHE, "pyodide-wheels"), lock["info"]["python"])
    for key in needed:
        path = wheels[_norm(key)]
        shutil.copy2(path, dest)
        packages[key]["file_name"] = os.path.basename(path)
        packages[key]["sha256"] = _sha256(path)
    with open(lock_path, "w") as f:
        json.dump(lock, f)
    return needed


def build(build_wheel=True, pyodide_dir=None):
    ensure_build_deps()
    if build_wheel or not os.path.exists(os.path.join(SITE, "wheels", "latest.json")):
        wheel.publish(wheel.build(), SITE)
    with open(os.path.join(SITE, "wheels", "latest.json")) as f:
        whl = os.path.join(SITE, "wheels", json.load(f)["wheel"])

    pretrain_digits_cnn.publish(SITE)   # and the digits it trains on, for the course notebooks
    shutil.rmtree(LITE_DIR, ignore_errors=True)
    os.makedirs(LITE_DIR)
    added = build_pyodide(os.path.join(LITE_DIR, "static", "pyodide"), pyodide_dir)
    pypi = os.path.join(LITE_DIR, "pypi")
    os.makedirs(pypi)
    shutil.copy2(whl, pypi)
    for path in _pip_download(PIPLITE_EXTRA, os.path.join(CACHE, "piplite-wheels")).values():
        shutil.copy2(path, pypi)
    config = {"jupyter-lite-schema-version": 0,
              "jupyter-config-data": {
                  "appName": "torchweb on JupyterLite",
                  "exposeAppInBrowser": True,
                  "litePluginSettings": {KERNEL_PLUGIN: {"disablePyPIFallback": True}}}}
    with open(os.path.join(LITE_DIR, "jupyter-lite.json"), "w") as f:
        json.dump(config, f, indent=1)

    shutil.rmtree(OUTPUT, ignore_errors=True)
    jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
    cmd = [jupyter, "lite", "build", "--lite-dir", LITE_DIR, "--output-dir", OUTPUT,
           "--contents", os.path.join(SITE, "notebooks")]
    r = subprocess.run(cmd, cwd=LITE_DIR, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"jupyter lite build failed:\n{r.stdout[-5000:]}\n{r.stderr[-5000:]}")
    with open(os.path.join(OUTPUT, "jupyter-lite.json")) as f:
        settings = json.load(f)["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]
    if "pyodideUrl" not in settings or not settings.get("disablePyPIFallback"):
        raise SystemExit(f"the built site's kernel settings lack the local Pyodide: {settings}")
    return {"output": OUTPUT, "pyodide_packages_added": added, "kernel": settings}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-wheel", action="store_true", help="keep the wheel already in site/wheels/")
    ap.add_argument("--pyodide-dir", help="an untarred npm pyodide package (default node_modules/pyodide)")
    args = ap.parse_args()
    print(json.dumps(build(build_wheel=not args.no_wheel, pyodide_dir=args.pyodide_dir), indent=1))


if __name__ == "__main__":
    main()
