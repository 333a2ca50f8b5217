"""Open a page of site/ in headless Chromium with WebGPU and print what it shows.

The page protocol: an element #output whose data-status becomes DONE or ERROR. This script
copies Pyodide's core into site/pyodide/ if missing, builds the wheel into site/wheels/,
serves site/ on 127.0.0.1 and waits. Exit status: 0 on DONE, 1 on ERROR, 2 on timeout.

    python scripts/run_page.py [--page index.html] [--pyodide-dir DIR] [--no-build] [--port N]
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402
import site_data  # noqa: E402
import wheel  # noqa: E402

REPO = wheel.REPO
SITE = os.path.join(REPO, "site")
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json", "pyodide.js")
CHROME_FLAGS = ("--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage")


def ensure_pyodide(site=SITE, source=None):
    """Copy Pyodide's core files into site/pyodide/ unless they are there already."""
    dest = os.path.join(site, "pyodide")
    if all(os.path.exists(os.path.join(dest, f)) for f in PYODIDE_FILES[:5]):
        return dest
    candidates = [source, os.environ.get("TORCHWEB_PYODIDE_DIR"),
                  os.path.join(REPO, "node_modules", "pyodide")]
    for c in filter(None, candidates):
        if os.path.exists(os.path.join(c, "pyodide.mjs")):
            os.makedirs(dest, exist_ok=True)
            for f in PYODIDE_FILES:
                if os.path.exists(os.path.join(c, f)):
                    shutil.copy2(os.path.join(c, f), dest)
            return dest
    raise SystemExit("Pyodide's core is missing: `npm install pyodide@314.0.7` in the repo root, "
                     "or pass --pyodide-dir (or TORCHWEB_PYODIDE_DIR) pointing at an untarred npm pyodide package")


def chrome(extra_flags=()):
    """A headless Chromium with WebGPU, driven by Selenium offline, with a fresh profile."""
    os.environ["SE_OFFLINE"] = "true"   # keep Selenium Manager from looking for downloads
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")
    profile = tempfile.mkdtemp(prefix="torchweb-chrome-")
    for flag in CHROME_FLAGS + tuple(extra_flags) + (f"--user-data-dir={profile}",):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("TORCHWEB_CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=opts, service=service)
    driver._torchweb_profile = profile
    return driver


def quit_chrome(driver):
    try:
        driver.quit()
    finally:
        shutil.rmtree(driver._torchweb_profile, ignore_errors=True)


def wait_for_page(driver, url, timeout, echo=True):
    """Open url and wait for #output's DONE/ERROR: (status, text). status 'TIMEOUT' on timeout."""
    driver.get(url)
    script = ("const o = document.getElementById('output');"
              "return o ? [o.dataset.status || '', o.textContent] : ['', ''];")
    shown = 0
    deadline = time.monotonic() + timeout
    while True:
        status, text = driver.execute_script(script)
        if echo and len(text) > shown:   # stream the page's log as it grows
            sys.stdout.write(text[shown:])
            sys.stdout.flush()
            shown = len(text)
        if status in ("DONE", "ERROR"):
            return status, text
        if time.monotonic() > deadline:
            return "TIMEOUT", text
        time.sleep(0.25)


def console_log(driver):
    try:
        return "\n".join(f"[{e['level']}] {e['message']}" for e in driver.get_log("browser"))
    except Exception:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--page", default="index.html", help="path under site/, query allowed")
    ap.add_argument("--pyodide-dir", help="an untarred npm pyodide package (default node_modules/pyodide)")
    ap.add_argument("--no-build", action="store_true", help="use the wheel already in site/wheels/")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--port", type=int, default=0, help="port to serve on (default: any free one)")
    args = ap.parse_args()

    ensure_pyodide(SITE, args.pyodide_dir)
    if not args.no_build:
        wheel.publish(wheel.build())
        site_data.publish(SITE)
    server, base = serve.start(SITE, args.port)
    driver = chrome()
    try:
        status, _ = wait_for_page(driver, base + args.page, args.timeout)
        if status != "DONE":
            print(f"\n[run_page] {status}; browser console:\n{console_log(driver)}", file=sys.stderr)
    finally:
        quit_chrome(driver)
        server.shutdown()
    sys.exit({"DONE": 0, "ERROR": 1}.get(status, 2))


if __name__ == "__main__":
    main()
