"""The JupyterLite site (site/lite/, built by scripts/build_jupyterlite.py: local Pyodide with the
kernel's packages, the torchweb wheel for `%pip install`, no PyPI fallback) in headless Chromium,
offline: opens site/notebooks/train.ipynb, runs all cells through window.jupyterapp and checks
the outputs (WebGPU adapter, webgpu device, decreasing loss, fitted weights). About 30 s in the
browser after a ~15 s build. Deselect with -m "not browser"."""

import time

import pytest

from page_helpers import require_chromium, run_page, served_chromium
import build_jupyterlite  # scripts/, on the path through page_helpers

KERNEL_STATUS = """
const app = window.jupyterapp; if (!app) return 'no app';
const w = app.shell.currentWidget; if (!w || !w.sessionContext) return 'no notebook';
const k = w.sessionContext.session && w.sessionContext.session.kernel;
return k ? k.status : 'no kernel';"""
OUTPUTS = "return [...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText);"


def _wait(driver, script, done, timeout):
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script)
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


@pytest.mark.browser
def test_jupyterlite_notebook_trains_on_webgpu():
    require_chromium("the JupyterLite site")
    build_jupyterlite.build()
    # no COOP/COEP headers: see the build script
    with served_chromium(build_jupyterlite.SITE) as (driver, base):
        driver.get(base + "lite/lab/index.html?path=train.ipynb")
        status = _wait(driver, KERNEL_STATUS, lambda s: s == "idle", 90)
        assert status == "idle", f"kernel not idle after 90 s: {status}\n{run_page.console_log(driver)[-5000:]}"
        driver.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells');")
        outs = _wait(driver, OUTPUTS, lambda o: any("weight:" in t or "Traceback" in t or "Error" in t
                                                    for t in o), 90)
        text = "\n".join(outs)
        assert "weight:" in text and "Traceback" not in text, \
            f"{text[-5000:]}\nconsole:\n{run_page.console_log(driver)[-5000:]}"
        lines = {ln.split(":", 1)[0]: ln.split(":", 1)[1].strip() for ln in text.splitlines() if ":" in ln}
        assert "backend=browser-webgpu" in lines["adapter"], lines
        assert lines["device"].startswith("webgpu"), lines
        losses = [float(v) for v in lines["losses"].split()]
        assert len(losses) == 30 and all(b < a for a, b in zip(losses, losses[1:])), losses
        assert losses[-1] < 1e-3 * losses[0], losses
