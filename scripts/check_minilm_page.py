"""Open site/minilm.html in headless Chromium twice (the second visit should read the weights from
the browser's cache) and print what the page shows: adapter, device, weights source, load times,
time to first result and the first search's ranking; then a second query typed in the search box,
and the "Clear cache" button (the cache "torchweb-minilm" must be gone). A manual check, not a test.

    .venv/bin/python scripts/site_minilm.py          # weights into site/data/minilm/
    .venv/bin/python scripts/check_minilm_page.py [--no-build] [--visits N] [--timeout S]
Exit status 0 when every visit ends DONE, 1 otherwise.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_page  # noqa: E402
import serve  # noqa: E402
import site_minilm  # noqa: E402
import wheel  # noqa: E402

SHOW = ("adapter", "device", "weights", "first", "times", "result-info")


def second_query(driver, query, timeout=120):
    """Type a query in the box, submit, wait for its ranking; print it."""
    n = driver.execute_script("return globalThis.torchwebMiniLM.searches.length;")
    driver.execute_script("const q = document.getElementById('query'); q.value = arguments[0];"
                          "document.getElementById('search').click();", query)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = driver.execute_script("return globalThis.torchwebMiniLM;")
        if len(s["searches"]) > n:
            last = s["searches"][-1]
            print(f"second query {last['query']!r}: {last['seconds'] * 1000:.0f} ms, top 3: {last['top']}")
            return last["query"] == query
        if s["errors"]:
            print(f"second query failed: {s['errors']}")
            return False
        time.sleep(0.25)
    print("second query: timeout")
    return False


def clear_cache(driver):
    """Click "Clear cache" and check that the Cache API no longer holds torchweb-minilm."""
    before = driver.execute_async_script("caches.keys().then(arguments[0]);")
    driver.execute_script("document.getElementById('clear').click();")
    time.sleep(1.0)
    after = driver.execute_async_script("caches.keys().then(arguments[0]);")
    shown = driver.execute_script("return document.getElementById('cache-status').textContent;")
    print(f"clear cache: caches before {before}, after {after}; page says: {shown}")
    return "torchweb-minilm" in before and "torchweb-minilm" not in after


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-build", action="store_true", help="use the wheel already in site/wheels/")
    ap.add_argument("--visits", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--query", default="", help="?q= for the first search")
    args = ap.parse_args()

    run_page.ensure_pyodide(run_page.SITE)
    if not args.no_build:
        wheel.publish(wheel.build())
    site_minilm.publish(run_page.SITE)
    server, base = serve.start(run_page.SITE, 0)
    driver = run_page.chrome()
    ok = True
    try:
        for visit in range(1, args.visits + 1):
            print(f"\n===== visit {visit} =====")
            url = base + "minilm.html" + (f"?q={args.query}" if args.query else "")
            status, _ = run_page.wait_for_page(driver, url, args.timeout, echo=False)
            print(f"status: {status}")
            for key in SHOW:
                text = driver.execute_script(f"const e = document.getElementById('{key}'); return e ? e.textContent : null;")
                print(f"{key}: {text}")
            rows = driver.execute_script(
                "return [...document.querySelectorAll('#results tr')].map(r => [...r.cells].map(c => c.textContent.trim()));")
            print("results:")
            for row in rows:
                print("   " + "  ".join(row))
            summary = driver.execute_script("return globalThis.torchwebMiniLM || null;")
            print("summary: " + json.dumps(summary))
            if status == "DONE" and visit == 1:
                ok &= second_query(driver, "Someone plays music.")
            if status == "DONE" and visit == args.visits:
                ok &= clear_cache(driver)
            if status != "DONE":
                ok = False
                print(driver.execute_script("return document.getElementById('output').textContent;"))
                print(run_page.console_log(driver), file=sys.stderr)
                break
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
