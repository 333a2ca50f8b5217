#!/usr/bin/env bash
# Builds the pure wheel torchweb-<version>-py3-none-any.whl into wheels/ and copies it to site/wheels/.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python; [ -x "$py" ] || py=python3
rm -f wheels/torchweb-*.whl
"$py" -m pip wheel -q --no-deps --no-build-isolation -w wheels . >/dev/null
rm -rf build src/*.egg-info
mkdir -p site/wheels
rm -f site/wheels/torchweb-*.whl
cp wheels/torchweb-*.whl site/wheels/
ls wheels/torchweb-*.whl
