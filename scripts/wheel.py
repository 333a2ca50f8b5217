"""Build torchweb's wheel and put it where the pages load it (site/wheels/ + latest.json).

The wheel comes from pyproject.toml through pip, built in a clean copy of the sources (no
build isolation first, so it works offline when the build backend is installed; then with
isolation). Without pyproject.toml,
`zip_src` packs src/torchweb into a minimal pure wheel, so the pages can be tried early.
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


def build(out_dir=os.path.join(REPO, "wheels")):
    """The path of a freshly built torchweb wheel in out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    if not os.path.exists(os.path.join(REPO, "pyproject.toml")):
        print("wheel.py: no pyproject.toml yet; packing src/torchweb directly", file=sys.stderr)
        return zip_src(out_dir)
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


def zip_src(out_dir, version="0.0.0.dev0"):
    """A minimal pure-Python wheel of src/torchweb (no pyproject needed)."""
    name = f"torchweb-{version}-py3-none-any.whl"
    path = os.path.join(out_dir, name)
    dist = f"torchweb-{version}.dist-info"
    records = []
    src = os.path.join(REPO, "src")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data):
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{arc},sha256={digest},{len(data)}")
        for root, dirs, files in os.walk(os.path.join(src, "torchweb")):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if not f.endswith((".pyc",)):
                    full = os.path.join(root, f)
                    with open(full, "rb") as fh:
                        add(os.path.relpath(full, src).replace(os.sep, "/"), fh.read())
        add(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: torchweb\nVersion: {version}\n".encode())
        add(f"{dist}/WHEEL", b"Wheel-Version: 1.0\nGenerator: torchweb-scripts\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{dist}/RECORD", "\n".join(records + [f"{dist}/RECORD,,"]) + "\n")
    return path


def publish(wheel, site_dir=os.path.join(REPO, "site")):
    """Copy the wheel to site/wheels/ and name it in latest.json, which site/boot.mjs reads."""
    dest = os.path.join(site_dir, "wheels")
    os.makedirs(dest, exist_ok=True)
    for old in glob.glob(os.path.join(dest, "*.whl")):
        os.remove(old)
    shutil.copy2(wheel, dest)
    with open(os.path.join(dest, "latest.json"), "w") as f:
        json.dump({"wheel": os.path.basename(wheel)}, f)
    return os.path.join(dest, os.path.basename(wheel))


if __name__ == "__main__":
    print(publish(build()))
