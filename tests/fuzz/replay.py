"""Replay fuzz cases from the command line:

    python -m fuzz.replay                 every entry of tests/fuzz_regressions.json
    python -m fuzz.replay 3879a1 overlap  entries whose id starts so, or whose bug group is so
    python -m fuzz.replay '{"family": ...}'   a case as JSON (a failure message's "case:" line)

(run from tests/, with the repository's src/ importable, as conftest.py arranges for pytest;
VK_ICD_FILENAMES pointing at lavapipe for the webgpu device.) Prints each case's outcome on
both devices, with the failure message where it differs.
"""

import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src"))
sys.path.insert(0, os.path.join(HERE, ".."))
os.environ.setdefault("TORCHWEB_BROWSER_LIMITS", "1")

from fuzz.runner import run_case  # noqa: E402
from fuzz.session import load_regressions  # noqa: E402


def main(argv):
    warnings.filterwarnings("ignore")
    entries = load_regressions().get("cases", [])
    picked = []
    for a in argv or [""]:
        if a.startswith("{"):
            picked.append({"id": "-", "bug": "-", "case": json.loads(a)})
        else:
            picked += [e for e in entries if e["id"].startswith(a) or e.get("bug") == a]
    for e in picked:
        status = "open" if e.get("xfail_reason") else "fixed" if e.get("fixed") else ""
        print(f"== {e['id']} [{e.get('bug', '')}] {status}")
        for device in ("cpu", "webgpu"):
            out = run_case(e["case"], device)
            print(f"   {device}: {out.status} {out.kind or out.deviation}")
            if out.failed:
                print("      " + out.message.replace("\n", "\n      "))


if __name__ == "__main__":
    main(sys.argv[1:])
