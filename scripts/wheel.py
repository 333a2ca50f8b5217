"""Build torchweb's wheel and put it where the pages load it (site/wheels/ + latest.json).

The wheel comes from pyproject.toml through pip, built in a clean copy of the sources (no
build isolation first, so it works offline when the build backend is installed; then with
isolation). Run as a script it also readies site/pyodide/ (from node_modules/pyodide).

build_pyodide() makes a second wheel for the pages: bytecode compiled by Pyodide's own Python
(scripts/pyodide_pyc.mjs, run by Node) instead of the sources, so a page does not compile
torchweb at every visit. The pure wheel stays what pip installs everywhere.
"""

import base64
import glob
import hashlib
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


# Modules the pages show as code (the Complete page's model, through inspect.getsource): shipped
# as source in the pages' wheel too
KEEP_SOURCE = ("torchweb/models/",)


def build_pyodide(wheel, pyodide_dir=None):
    """The pages' wheel: wheel with each torchweb .py replaced by its .pyc compiled by Pyodide's
    Python (the sourceless layout of Pyodide's own packages and standard library: no compiling in
    the page, and no more files to unpack than the pure wheel), named
    torchweb-VER-cp3XY-none-any.whl beside wheel: it runs on that Python only (site/boot.mjs
    falls back to the pure wheel elsewhere). None when Node or Pyodide is missing."""
    pyodide_dir = pyodide_dir or _pyodide_dir()
    if not (pyodide_dir and shutil.which("node")):
        return None
    # The same sources and Pyodide give the same bytecode: reuse the last build (the page tests
    # publish the wheel once per file; compiling takes Node a few seconds)
    key = _content_key(wheel, os.path.join(pyodide_dir, "pyodide-lock.json"), __file__)
    name, ver = os.path.basename(wheel).split("-")[:2]
    for cached in glob.glob(os.path.join(os.path.dirname(wheel), f".pyc-{key}-*.whl")):
        version = cached.rsplit("-", 1)[1][:-len(".whl")]
        out = os.path.join(os.path.dirname(wheel), f"{name}-{ver}-cp{version.replace('.', '')}-none-any.whl")
        shutil.copy2(cached, out)
        return out, version
    with tempfile.TemporaryDirectory(prefix="torchweb-pyc-") as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
            names = z.namelist()
        r = subprocess.run(["node", os.path.join(REPO, "scripts", "pyodide_pyc.mjs"), pyodide_dir, tmp, "torchweb"],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"compiling bytecode with Pyodide failed:\n{r.stdout}\n{r.stderr}")
        version = r.stdout.split()[-1]                                # "3.14"
        out = os.path.join(os.path.dirname(wheel), f"{name}-{ver}-cp{version.replace('.', '')}-none-any.whl")
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        files = [n + "c" if n.endswith(".py") and not n.startswith(KEEP_SOURCE)
                 and os.path.exists(os.path.join(tmp, n + "c")) else n
                 for n in names if n != record]
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            rows = []
            for n in files:
                with open(os.path.join(tmp, n), "rb") as f:
                    data = f.read()
                z.writestr(n, data)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                rows.append(f"{n},sha256={digest},{len(data)}")
            z.writestr(record, "\n".join(rows + [f"{record},,"]) + "\n")
    for old in glob.glob(os.path.join(os.path.dirname(wheel), ".pyc-*.whl")):
        os.remove(old)
    shutil.copy2(out, os.path.join(os.path.dirname(wheel), f".pyc-{key}-{version}.whl"))
    return out, version


def _content_key(wheel, *files):
    """A hash of the wheel's entries (names and bytes, not zip timestamps) and of files."""
    h = hashlib.sha256()
    with zipfile.ZipFile(wheel) as z:
        for n in sorted(z.namelist()):
            h.update(n.encode() + b"\0" + z.read(n))
    for f in files:
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def _pyodide_dir():
    for c in (os.environ.get("TORCHWEB_PYODIDE_DIR"), os.path.join(REPO, "node_modules", "pyodide"),
              os.path.join(REPO, "site", "pyodide")):
        if c and os.path.exists(os.path.join(c, "pyodide.mjs")) and os.path.exists(os.path.join(c, "pyodide.asm.wasm")):
            return c
    return None


def _check_has_js(path):
    with zipfile.ZipFile(path) as z:
        if "torchweb/_js/runtime.mjs" not in z.namelist():
            raise RuntimeError(f"{path} lacks torchweb/_js/runtime.mjs: add it to the package data "
                               f"in pyproject.toml, or the browser driver cannot start")


def publish(wheel, site_dir=os.path.join(REPO, "site"), pyodide_wheel="build"):
    """Copy the wheel to site/wheels/ and name it in latest.json, which site/boot.mjs reads; its
    runtime.mjs goes beside it, so pages under a CSP import it from their own origin (no eval).
    The bytecode wheel (build_pyodide's (path, Python version), built here unless given, or None)
    goes beside it as latest.json's "pyodide_wheel", which the pages load where Pyodide's Python
    is latest.json's "pyodide_wheel_python"."""
    if pyodide_wheel == "build":
        pyodide_wheel = build_pyodide(wheel)
    dest = os.path.join(site_dir, "wheels")
    os.makedirs(dest, exist_ok=True)
    for old in glob.glob(os.path.join(dest, "*.whl")):
        os.remove(old)
    latest = {"wheel": os.path.basename(wheel), "runtime": RUNTIME_JS}
    shutil.copy2(wheel, dest)
    if pyodide_wheel:   # (path, the Python "major.minor" its .pyc files need)
        pyodide_wheel, latest["pyodide_wheel_python"] = pyodide_wheel
        latest["pyodide_wheel"] = os.path.basename(pyodide_wheel)
        shutil.copy2(pyodide_wheel, dest)
    with zipfile.ZipFile(wheel) as z, open(os.path.join(dest, RUNTIME_JS), "wb") as f:
        f.write(z.read("torchweb/_js/runtime.mjs"))
    with open(os.path.join(dest, "latest.json"), "w") as f:
        json.dump(latest, f)
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
