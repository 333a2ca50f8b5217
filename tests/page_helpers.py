"""What the browser page tests share: site/ served on 127.0.0.1 (scripts/serve.py) and a headless
Chromium with WebGPU (SwiftShader) driven by Selenium (scripts/run_page.py)."""

import contextlib
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import build_site  # noqa: E402
import run_page  # noqa: E402
import serve  # noqa: E402
import wheel  # noqa: E402

SITE = run_page.SITE


def require_chromium(what):
    """Fail (not skip) without Chromium: a page test that never runs would pass unnoticed."""
    if not os.path.exists(os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")):
        pytest.fail(f"{what} needs Chromium (scripts/setup.sh installs it)")


def publish_site():
    """site/ with Pyodide's core, the torchweb wheel built from this checkout, the Playground's
    editor bundle and the docs pages (scripts/build_site.py)."""
    run_page.ensure_pyodide(SITE)
    wheel.publish(wheel.build())
    build_site.build()


@contextlib.contextmanager
def served_chromium(site=SITE, webgpu=True, csp=None, on_report=None):
    """(driver, base URL): site served on a free port and a fresh headless Chromium, both closed
    on leaving. webgpu=False leaves out --enable-unsafe-webgpu (no adapter in headless Linux).
    csp, on_report: serve.start's (a CSP header, and where the browser's violation reports go)."""
    server, base = serve.start(site, csp=csp, on_report=on_report)
    try:
        flags = run_page.CHROME_FLAGS
        if not webgpu:   # run_page.chrome reads its flags from the module: swapped for this launch
            run_page.CHROME_FLAGS = tuple(f for f in flags if f != "--enable-unsafe-webgpu")
        try:
            driver = run_page.chrome()
        finally:
            run_page.CHROME_FLAGS = flags
        try:
            yield driver, base
        finally:
            run_page.quit_chrome(driver)
    finally:
        server.shutdown()


def finished_page(driver, url, timeout, summary=None):
    """Open url and wait for its #output to say DONE or ERROR: (status, log text, the page's
    summary object globalThis[summary] or None, the browser console where it did not finish)."""
    status, text = run_page.wait_for_page(driver, url, timeout, echo=False)
    state = driver.execute_script(f"return globalThis.{summary} || null;") if summary else None
    console = run_page.console_log(driver) if status != "DONE" else ""
    return status, text, state, console
