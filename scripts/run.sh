#!/usr/bin/env bash
# The main job: set up, build the wheel, and serve site/ on http://127.0.0.1:8000 with the demo
# gallery (Pyodide + torchweb on WebGPU). With --headless [PAGE], open a page (default
# index.html; e.g. "train.html?epochs=1") in headless Chromium instead, print what it shows,
# and exit (non-zero if the page reports an error).
set -euo pipefail
cd "$(dirname "$0")/.."
TORCHWEB_NO_TORCH=1 scripts/setup.sh
.venv/bin/python scripts/wheel.py
if [ "${1:-}" = "--headless" ]; then
  exec .venv/bin/python scripts/run_page.py --no-build --port "${PORT:-8000}" --page "${2:-index.html}"
fi
exec .venv/bin/python scripts/serve.py --port "${PORT:-8000}"
