#!/usr/bin/env bash
# Installs what torchweb's build, demo and tests need on a fresh Debian machine with Python 3.11
# and Node: Chromium + ChromeDriver + Mesa's lavapipe (apt), Pyodide 314, CodeMirror and esbuild
# (npm), and a virtual environment .venv with wgpu, numpy, selenium, pytest, markdown-it-py and
# Pygments (the docs pages) and PyTorch 2.13 CPU (the test oracle).
# Idempotent: what is there already is not installed again.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=()
command -v chromium >/dev/null || apt_pkgs+=(chromium)
command -v chromedriver >/dev/null || apt_pkgs+=(chromium-driver)
[ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || apt_pkgs+=(mesa-vulkan-drivers)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${apt_pkgs[@]}" >/dev/null
fi

# Pyodide's core, and what scripts/build_site.py bundles for the Playground's editor (CodeMirror 6
# with esbuild). One install names them all: npm removes what a --no-save install leaves unnamed.
npm_pkgs="pyodide@314.0.7 codemirror@6.0.2 @codemirror/lang-python@6.2.1 @codemirror/theme-one-dark@6.1.3 esbuild@0.28.2"
if [ ! -f node_modules/pyodide/pyodide.mjs ] || [ ! -d node_modules/@codemirror/lang-python ] \
   || [ ! -d node_modules/@codemirror/theme-one-dark ] || [ ! -x node_modules/.bin/esbuild ]; then
  npm install --no-save --no-audit --no-fund --loglevel=error $npm_pkgs
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
want="setuptools wheel pytest hypothesis numpy selenium tokenizers markdown-it-py pygments safetensors einops tqdm matplotlib pillow wgpu==0.32.0"
mods="setuptools, wheel, pytest, hypothesis, numpy, selenium, tokenizers, markdown_it, pygments, safetensors, einops, tqdm, matplotlib, PIL, wgpu"
# transformers is the oracle of tests/test_lm_*.py; torchvision the oracle of torchweb.vision,
# found, not imported, by the check below, since PyPI's wheel links its C++ operators against
# CUDA torch and fails to import on the CPU one (tests/torchvision_ref.py imports its Python parts)
specs="safetensors"
if [ "${TORCHWEB_NO_TORCH:-0}" != 1 ]; then
  want="$want torch==2.13.0 transformers==5.24.0 torchvision==0.28.0"; mods="$mods, torch, transformers"
  specs="$specs torchvision"
fi
if ! .venv/bin/python -c "import $mods, importlib.util as u, sys; sys.exit(not all(u.find_spec(n) for n in '$specs'.split()))" 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check $want
fi

# Pure-Python wheels the browser tier's scripts install in the page with micropip, from this
# folder (served with the repository root; tests/browser/scripts/einops_tqdm.py): einops and tqdm
# at the host's versions (the recorded results are theirs), and micropip, which the npm package
# (core only) lacks, at the version Pyodide's lockfile names. index.json maps name -> file.
.venv/bin/python - <<'PY'
import glob, importlib.metadata as md, json, os, subprocess, sys
dest = ".cache/browser-wheels"
lock = json.load(open("node_modules/pyodide/pyodide-lock.json"))
want = {"einops": md.version("einops"), "tqdm": md.version("tqdm"),
        "micropip": lock["packages"]["micropip"]["version"]}
def found(name, version):
    return glob.glob(os.path.join(dest, f"{name}-{version}-*.whl"))
missing = [f"{n}=={v}" for n, v in want.items() if not found(n, v)]
if missing:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                    "--only-binary=:all:", "--platform", "any", "--python-version", lock["info"]["python"],
                    "-d", dest, *missing], check=True)
with open(os.path.join(dest, "index.json"), "w") as f:
    json.dump({n: os.path.basename(found(n, v)[0]) for n, v in want.items()}, f)
PY
