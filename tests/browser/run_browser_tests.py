"""The browser test tier: replay cases.json (recorded from PyTorch) in Pyodide on real WebGPU.

Builds the wheel, serves the repository root, opens site/tests.html in headless Chromium and
prints the adapter, the driver checks, and passed/failed cases with every failure. Exit status
0 only when every case and check passed and at least MIN_CASES cases ran (without --filter).

    python tests/browser/run_browser_tests.py [--filter TEXT] [--worker] [--no-build] [--json OUT]
"""

import argparse
import json
import os
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import run_page  # noqa: E402
import serve  # noqa: E402
import wheel  # noqa: E402

MIN_CASES = 200
# The soak scripts (scripts/soak_*.py) measure the JS heap after a forced collection
MEMORY_FLAGS = ("--js-flags=--expose-gc", "--enable-precise-memory-info")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="", help="run only cases whose id contains this")
    ap.add_argument("--worker", action="store_true", help="run in a module Web Worker")
    ap.add_argument("--no-build", action="store_true", help="use the wheel already in site/wheels/")
    ap.add_argument("--pyodide-dir", help="an untarred npm pyodide package (default node_modules/pyodide)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", help="write the page's summary here")
    ap.add_argument("--quiet", action="store_true", help="print the summary only, not the page log")
    args = ap.parse_args()

    run_page.ensure_pyodide(run_page.SITE, args.pyodide_dir)
    if not args.no_build:
        wheel.publish(wheel.build())
    query = {"filter": args.filter} if args.filter else {}
    if args.worker:
        query["worker"] = "1"
    page = "site/tests.html" + ("?" + urllib.parse.urlencode(query) if query else "")

    status, text, summary, console = open_page(page, args.timeout, "torchwebSummary", echo=not args.quiet)
    if status != "DONE" or not summary:
        print(f"\n[browser tier] page {status}\n{text[-4000:] if args.quiet else ''}\n{console}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    ok = _report(summary, args.filter)
    return 0 if ok else 1


def open_page(page, timeout, summary_name, echo=True):
    """Serve the repository root, open page (a path under it) in a fresh headless Chromium and
    wait for its DONE or ERROR: (status, log text, globalThis[summary_name] or None, the
    browser console where it did not finish)."""
    server, base = serve.start(REPO)
    driver = run_page.chrome(MEMORY_FLAGS)
    try:
        status, text = run_page.wait_for_page(driver, base + page, timeout, echo=echo)
        summary = driver.execute_script(f"return globalThis.{summary_name} || null;")
        console = run_page.console_log(driver) if status != "DONE" else ""
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    return status, text, summary, console


def _report(s, case_filter):
    failed, dfailed = s["failed"], s["driver"]["failed"]
    print(f"\n[browser tier] adapter: {s['adapter']}")
    print(f"[browser tier] driver checks: {len(s['driver']['passed'])} passed, {len(dfailed)} failed")
    print(f"[browser tier] cases: {s['passed']} passed, {len(failed)} failed of {s['total']} "
          f"(recorded with torch {s.get('recorded_with')}) in {s.get('seconds')} s")
    for name, msg in dfailed:
        print(f"FAIL driver check {name}: {msg}")
    for cid, msg in failed:   # one line each (the page log, without --quiet, has them whole)
        print(f"FAIL {cid}: {' '.join(msg.split())[:400]}")
    if s["total"] < MIN_CASES and not case_filter:
        print(f"[browser tier] only {s['total']} cases ran; expected at least {MIN_CASES}")
        return False
    return not failed and not dfailed and s["total"] > 0


if __name__ == "__main__":
    sys.exit(main())
