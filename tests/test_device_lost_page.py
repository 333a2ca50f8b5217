"""The demo pages after a lost GPU device (docs/reliability.md, "Device loss"): an error of the
worker that names DeviceLostError shows a restart button (site/demo_page.mjs showError, shared
by gpt.html, train.html and minilm.html) that reloads the page; other errors do not get one. The error itself
is raised in the page by tests/browser/scripts/device_lost.py (the browser tier)."""

import time

import pytest

from page_helpers import publish_site, require_chromium, served_chromium

LOST = ("PythonError: Traceback (most recent call last): ...\ntorchweb.backends.webgpu.errors.DeviceLostError: "
        "torchweb: the WebGPU device was lost (destroyed: Device was destroyed.)")

SHOW = """
const [text, done] = arguments;
const stage = document.getElementById("stage") || Object.assign(document.createElement("div"), {id: "stage"});
document.body.append(stage);
import("./demo_page.mjs").then((m) => {
  m.showError(text);
  const b = document.getElementById("restart");
  done({shown: stage.textContent, button: b ? b.textContent : null});
}, (e) => done({error: String(e)}));
"""


def _restart_reloads(driver):
    """Click #restart: the page reloads (a marker set before is gone)."""
    driver.execute_script("window.__before_reload = 1; document.getElementById('restart').click();")
    for _ in range(200):
        if driver.execute_script("return document.readyState === 'complete' && !window.__before_reload"):
            return
        time.sleep(0.05)
    pytest.fail("the restart button did not reload the page")


@pytest.mark.browser
def test_device_lost_error_offers_a_restart():
    require_chromium("the device-lost page test")
    publish_site()
    with served_chromium(webgpu=False) as (driver, base):
        driver.get(base + "hello.html")     # a page with no #stage of its own to race with
        got = driver.execute_async_script(SHOW, LOST)
        assert got.get("button") == "The GPU device was lost: restart", got
        assert "DeviceLostError" in got["shown"]
        _restart_reloads(driver)
        other = driver.execute_async_script(SHOW, "RuntimeError: shape mismatch")
        assert other.get("button") is None and "shape mismatch" in other["shown"], other


# minilm.html (site/minilm.mjs) has its own page script: its worker is replaced, before the page
# runs, by one that answers "start" with the given error, as the real worker's Python would.
FAKE_WORKER = """
window.Worker = class {
  constructor() { this.onmessage = null; this.onerror = null; }
  postMessage(m) {
    if (m.type === "start") setTimeout(() => this.onmessage({data: {type: "error", text: window.__fakeError}}), 0);
  }
  terminate() {}
};
"""


def _minilm_with_error(driver, base, text):
    """minilm.html run with a worker that fails with text: (stage text, restart button text)."""
    script = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                    {"source": f"window.__fakeError = {text!r};" + FAKE_WORKER})
    try:
        driver.get(base + "minilm.html")
        for _ in range(200):
            got = driver.execute_script(
                "const s = document.getElementById('stage'), b = document.getElementById('restart');"
                "const m = globalThis.torchwebMiniLM;"
                "return {shown: s.textContent, button: b ? b.textContent : null, errors: m ? m.errors : []};")
            if got["errors"]:
                return got
            time.sleep(0.05)
        pytest.fail(f"minilm.html showed no error: {got}")
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})


@pytest.mark.browser
def test_minilm_page_offers_a_restart():
    require_chromium("the device-lost page test")
    publish_site()
    with served_chromium(webgpu=False) as (driver, base):
        got = _minilm_with_error(driver, base, LOST)
        assert got["button"] == "The GPU device was lost: restart", got
        assert "DeviceLostError" in got["shown"] and got["errors"] == [LOST], got
        _restart_reloads(driver)
        other = _minilm_with_error(driver, base, "RuntimeError: shape mismatch")
        assert other["button"] is None and "shape mismatch" in other["shown"], other
