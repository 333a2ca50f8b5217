"""The demo pages after a lost GPU device (docs/reliability.md, "Device loss"): an error of the
worker that names DeviceLostError shows a restart button (site/demo_page.mjs showError, shared
by gpt.html and train.html) that reloads the page; other errors do not get one. The error itself
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


@pytest.mark.browser
def test_device_lost_error_offers_a_restart():
    require_chromium("the device-lost page test")
    publish_site()
    with served_chromium(webgpu=False) as (driver, base):
        driver.get(base + "hello.html")     # a page with no #stage of its own to race with
        got = driver.execute_async_script(SHOW, LOST)
        assert got.get("button") == "The GPU device was lost: restart", got
        assert "DeviceLostError" in got["shown"]
        driver.execute_script("window.__before_reload = 1; document.getElementById('restart').click();")
        for _ in range(200):   # the click reloads the page: the marker is gone
            if driver.execute_script("return document.readyState === 'complete' && !window.__before_reload"):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the restart button did not reload the page")
        other = driver.execute_async_script(SHOW, "RuntimeError: shape mismatch")
        assert other.get("button") is None and "shape mismatch" in other["shown"], other
