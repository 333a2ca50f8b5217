"""The PyScript pages (site/pyscript.html on the main thread, site/pyscript-worker.html in a
PyScript worker) in headless Chromium: built by scripts/build_pyscript.py (npm @pyscript/core,
local Pyodide, the torchweb wheel), served on 127.0.0.1, offline. Each trains an nn.Linear with
torch.optim.SGD on WebGPU; the test checks the adapter, the device and a decreasing loss.
About 40 s. Deselect with -m "not browser"."""

import json
import os
import sys

import pytest

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
sys.path.insert(0, SCRIPTS)

import build_pyscript  # noqa: E402
import run_page  # noqa: E402
import serve  # noqa: E402

PAGES = (("pyscript.html", False), ("pyscript-worker.html", True))


@pytest.mark.browser
def test_pyscript_pages_train_on_webgpu():
    if not os.path.exists(os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")):
        pytest.fail("the PyScript pages need Chromium (scripts/setup.sh installs it)")
    build_pyscript.build()
    server, base = serve.start(build_pyscript.SITE)
    driver = run_page.chrome()
    try:
        for page, worker in PAGES:
            status, text = run_page.wait_for_page(driver, base + page, 90, echo=False)
            console = run_page.console_log(driver) if status != "DONE" else ""
            assert status == "DONE", f"{page}: {status}\n{text[-5000:]}\nconsole:\n{console[-5000:]}"
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
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
