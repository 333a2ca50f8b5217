#!/usr/bin/env bash
# The main job: set up, build the wheel, and serve site/ on http://127.0.0.1:8000 with the demo
# gallery (Pyodide + torchweb on WebGPU). With --headless, open every gallery page in headless
# Chromium with short settings instead and print one line per page (adapter, time to the first
# result, the page's result), failing if any page fails (scripts/run_gallery.py); with
# --headless PAGE (e.g. "train.html?epochs=1"), open that one page, print what it shows, and exit
# (non-zero if the page reports an error).
set -euo pipefail
cd "$(dirname "$0")/.."
TORCHWEB_NO_TORCH=1 scripts/setup.sh
.venv/bin/python scripts/wheel.py
if [ "${1:-}" = "--headless" ]; then
  if [ -z "${2:-}" ]; then
    exec .venv/bin/python scripts/run_gallery.py --no-build --port "${PORT:-8000}"
  fi
  exec .venv/bin/python scripts/run_page.py --no-build --port "${PORT:-8000}" --page "$2"
fi
exec .venv/bin/python scripts/serve.py --port "${PORT:-8000}"
