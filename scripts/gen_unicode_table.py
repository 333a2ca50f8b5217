"""Writes src/torchweb/models/unicode_categories_<version>.json: the code point ranges of every
Unicode general category, from the unicodedata of the Python that runs this script, so that
torchweb.models.unicode_regex builds \\p{L}, \\p{N}, ... without scanning all 1.1M code points
(1-3 s in Pyodide). unicode_regex uses a table only when its "unicode" equals the running
Python's unicodedata.unidata_version, and scans otherwise, so results stay exact.

Run it under each Python whose Unicode version the wheel should cover:
    python scripts/gen_unicode_table.py                          # this CPython (3.11: 14.0.0)
    python scripts/gen_unicode_table.py --pyodide node_modules/pyodide   # Pyodide's (through node)

Format: {"unicode": version, "categories": {"Lu": [d0, n0, d1, n1, ...], ...}}: each range is
(gap from the end of the previous range + 1, length - 1), so the file stays small (~40 KB)."""

import argparse
import json
import os
import subprocess
import sys

def table():
    """This Python's table (a dict as the file's)."""
    import unicodedata
    runs, prev, start = {}, None, 0
    for cp in range(0x110001):
        c = unicodedata.category(chr(cp)) if cp < 0x110000 else None
        if c != prev:
            if prev is not None:
                runs.setdefault(prev, []).append((start, cp - 1))
            prev, start = c, cp
    categories = {}
    for cat, spans in sorted(runs.items()):
        flat, pos = [], 0
        for lo, hi in spans:
            flat += [lo - pos, hi - lo]
            pos = hi + 1
        categories[cat] = flat
    return {"unicode": unicodedata.unidata_version, "categories": categories}


_NODE = """
const {loadPyodide} = require(process.argv[1] + "/pyodide.js");
(async () => {
  const py = await loadPyodide({ stdout: () => {}, stderr: (s) => console.error(s) });
  const src = require("fs").readFileSync(process.argv[2], "utf8");
  try {
    process.stdout.write(py.runPython(src + "\\nimport json\\njson.dumps(table())"));
  } catch (e) { console.error(String(e.message)); process.exitCode = 1; }
})();
"""


def pyodide_table(pyodide_dir):
    """The table of the Pyodide in pyodide_dir, run in node."""
    run = subprocess.run(["node", "-e", _NODE, os.path.abspath(pyodide_dir), os.path.abspath(__file__)],
                         capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise RuntimeError(f"node failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout)


def write(t):
    out_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "torchweb", "models")
    path = os.path.join(out_dir, f"unicode_categories_{t['unicode']}.json")
    with open(path, "w") as f:
        json.dump(t, f, separators=(",", ":"))
        f.write("\n")
    return path


if __name__ == "__main__" and "__file__" in globals():   # (not when node runs it in Pyodide)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pyodide", metavar="DIR", help="run in the Pyodide of DIR (through node) instead")
    args = ap.parse_args()
    path = write(pyodide_table(args.pyodide) if args.pyodide else table())
    print(path, os.path.getsize(path), "bytes")
