"""A second visit works offline (issue 23, item 1): site/sw.js, registered by site/offline.mjs,
caches Pyodide, the wheel and the page's files on the first visit; with the server stopped, the
Hello page opened again in the same profile still loads Pyodide and torchweb and reaches its
first GPU result, which equals PyTorch's. The badge says "cached", its "Clear cache" button
empties the cache, and the service worker runs under the site's CSP with no violation."""

import ast
import os
import re
import sys
import time

import pytest
import torch

from page_helpers import publish_site, require_chromium, run_page, serve

URL = "hello.html?worker=0"   # the main-thread half of the Hello page
HOOK = ("globalThis.__cspViolations = [];"
        "document.addEventListener('securitypolicyviolation', (e) => globalThis.__cspViolations.push("
        "`${e.violatedDirective} blocked ${e.blockedURI}`));")
FIRST = ("const o = document.getElementById('output');"
         "return [performance.now() / 1000, o ? o.textContent.includes('a @ b.T =') : false];")


def _visit(driver, base, timeout=180):
    """Open the page: (status, log, seconds from navigation to the first result line)."""
    load = time.monotonic()
    driver.get(base + URL)
    first = None
    deadline = load + timeout
    while time.monotonic() < deadline:
        now, seen = driver.execute_script(FIRST)
        if seen and first is None:
            first = now
        status = driver.execute_script("const o = document.getElementById('output'); return o ? o.dataset.status : '';")
        if status in ("DONE", "ERROR"):
            break
        time.sleep(0.1)
    text = driver.execute_script("const o = document.getElementById('output'); return o ? o.textContent : '';")
    return status, text, first


def _offline_state(driver, want, timeout=90):
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = driver.execute_script("return globalThis.torchwebOffline || null;")
        if state and state["state"] == want:
            return state
        time.sleep(0.25)
    return state


def _result(text):
    m = re.search(r"a @ b\.T = (\[\[.*?\]\])", text)
    assert m, text[-2000:]
    return torch.tensor(ast.literal_eval(m.group(1)))


@pytest.mark.browser
def test_second_visit_works_offline():
    require_chromium("the offline test")
    publish_site()
    want = torch.arange(6.).reshape(2, 3) @ torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0]]).T
    server, base = serve.start(run_page.SITE, csp=serve.CSP)
    driver = run_page.chrome()
    stopped = False
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK})
        status, text, first_online = _visit(driver, base)
        assert status == "DONE", text[-2000:] + run_page.console_log(driver)
        assert torch.equal(_result(text), want)
        cached = _offline_state(driver, "cached")
        assert cached and cached["state"] == "cached", cached
        assert cached["missing"] == [] and cached["bytes"] > 10e6, cached   # Pyodide's 14 MB at least
        badge = driver.execute_script("return document.getElementById('torchweb-offline').textContent;")
        assert "Works offline" in badge and "Clear cache" in badge, badge

        server.shutdown()
        server.server_close()   # connections are now refused: only the cache can answer
        stopped = True
        status, text, first_offline = _visit(driver, base)
        assert status == "DONE", text[-2000:] + run_page.console_log(driver)
        assert torch.equal(_result(text), want)
        assert first_offline is not None
        assert _offline_state(driver, "cached")["state"] == "cached"
        print(f"first result: online first visit {first_online:.2f} s, offline second visit {first_offline:.2f} s",
              file=sys.stderr)
        assert driver.execute_script("return globalThis.__cspViolations;") == []

        # "Clear cache" empties it
        driver.execute_script("document.querySelector('#torchweb-offline button').click();")
        cleared = _offline_state(driver, "cleared", timeout=30)
        assert cleared["state"] == "cleared"
        left = driver.execute_async_script(
            "const done = arguments[0]; caches.keys().then((k) => done(k));")
        assert "torchweb-site-v1" not in left, left
    finally:
        run_page.quit_chrome(driver)
        if not stopped:
            server.shutdown()
