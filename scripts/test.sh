#!/usr/bin/env bash
# Every test tier, after setting up what they need:
#   tier 1: CPython, native driver on lavapipe + the numpy cpu device, PyTorch as the oracle;
#   tier 2: the browser, Pyodide 314 in headless Chromium with WebGPU, replaying recorded cases;
#   tier 3: the bench/ scaffold, run once at a tiny size so that it keeps working.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/python scripts/wheel.py
.venv/bin/python scripts/fetch_minilm.py || echo "all-MiniLM-L6-v2 not fetched: tests/test_minilm.py will skip"
.venv/bin/python scripts/fetch_digits.py || echo "scikit-learn's digits not fetched: tests/test_digits_demo.py will skip"
export VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
start=$(date +%s)
.venv/bin/python -m pytest -q -p no:cacheprovider --durations=15 tests "$@"
.venv/bin/python bench/run.py --smoke
echo "all tiers passed in $(( $(date +%s) - start )) s"
