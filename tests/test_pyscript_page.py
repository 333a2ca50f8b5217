"""The PyScript pages (site/pyscript.html on the main thread, site/pyscript-worker.html in a
PyScript worker) in headless Chromium: built by scripts/build_pyscript.py (npm @pyscript/core,
local Pyodide, the torchweb wheel), served on 127.0.0.1, offline. Each trains an nn.Linear with
torch.optim.SGD on WebGPU; the test checks the adapter, the device and a decreasing loss.
About 40 s. Deselect with -m "not browser"."""

import json

import pytest

from page_helpers import finished_page, require_chromium, serve, served_chromium
import build_pyscript  # scripts/, on the path through page_helpers

PAGES = (("pyscript.html", False), ("pyscript-worker.html", True))


@pytest.mark.browser
def test_pyscript_pages_train_on_webgpu():
    require_chromium("the PyScript pages")
    build_pyscript.build()
    reports = []   # the site's CSP as a header (serve.py gives PyScript's files theirs): no violation
    with served_chromium(build_pyscript.SITE, csp=serve.CSP, on_report=reports.append) as (driver, base):
        for page, worker in PAGES:
            status, text, _, console = finished_page(driver, base + page, 90)
            assert status == "DONE", f"{page}: {status}\n{text[-5000:]}\nconsole:\n{console[-5000:]}"
            assert reports == [], reports
            shown = driver.execute_script(
                "const g = (id) => document.getElementById(id).textContent;"
                "return {result: document.getElementById('output').dataset.result,"
                "        adapter: g('adapter'), device: g('device'), first: g('first'),"
                "        losses: g('losses'), progress: document.getElementById('progress').value};")
            r = json.loads(shown["result"])
            assert r["worker"] is worker, (page, r)
            assert r["device"].startswith("webgpu"), (page, r["device"])
            assert shown["device"] == r["device"]
            assert "backend=browser-webgpu" in r["adapter"] and shown["adapter"] == r["adapter"], shown
            assert shown["first"].endswith(" s") and shown["progress"] == 100, shown
            losses = r["losses"]
            assert len(losses) == 40 and len(shown["losses"].split(", ")) == 40, shown["losses"]
            assert all(b < a for a, b in zip(losses, losses[1:])), losses
            assert losses[-1] < 1e-3 * losses[0], losses
            for got, want in zip(r["weight"][0] + r["bias"], [2.0, -3.0, 0.5, 1.0]):
                assert abs(got - want) < 1e-2, (r["weight"], r["bias"])
