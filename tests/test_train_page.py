"""The "Train" page (site/train.html, issue 10) in headless Chromium with WebGPU (SwiftShader):
Pyodide and the torchweb wheel load in a module Web Worker, site/demos/digits/train.py (plain
PyTorch code) trains on the digits copied into site/data/, and the page must report a finished
run with the adapter's name, one loss/accuracy point per epoch, a test accuracy well above
chance, and no errors.

SwiftShader trains at about one second per batch here, so the page runs a short version through
its URL parameters (PAGE below: 1 epoch on 800 training images, 35 to 70 s here with the load);
the full run (6 epochs on 1437 images, 97.2%) is tests/test_digits_demo.py's on lavapipe.
Set TORCHWEB_TRAIN_SCREENSHOT=path.png to save a screenshot of the finished page."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_page  # noqa: E402
import serve  # noqa: E402
import site_data  # noqa: E402
import wheel  # noqa: E402

EPOCHS, N_TRAIN = 1, 800
PAGE = f"train.html?epochs={EPOCHS}&train={N_TRAIN}"
MIN_ACCURACY = 0.5     # chance is 0.1; this short run reaches 0.70 (seeded)


@pytest.mark.browser
def test_train_page():
    if not os.path.exists(os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")):
        pytest.fail("the Train page test needs Chromium (scripts/setup.sh installs it)")
    try:
        site_data.publish_digits(run_page.SITE)
    except (site_data.fetch_digits.FetchError, OSError) as e:
        pytest.skip(f"scikit-learn's digits cannot be fetched (scripts/fetch_digits.py): {e}")
    run_page.ensure_pyodide(run_page.SITE)
    wheel.publish(wheel.build())
    server, base = serve.start(run_page.SITE)
    driver = run_page.chrome()
    try:
        status, text = run_page.wait_for_page(driver, base + PAGE, 240, echo=False)
        summary = driver.execute_script("return globalThis.torchwebTrain || null;")
        shot = os.environ.get("TORCHWEB_TRAIN_SCREENSHOT")
        if shot:
            driver.set_window_size(1000, 1100)
            driver.save_screenshot(shot)
        console = run_page.console_log(driver) if status != "DONE" else ""
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"
    assert summary and summary["finished"], summary
    assert summary["errors"] == [], summary["errors"]
    assert summary["adapter"], "the page did not name the WebGPU adapter"
    assert "adapter: " + summary["adapter"] in text
    assert [h["epoch"] for h in summary["history"]] == list(range(1, EPOCHS + 1))
    assert summary["nTrainUsed"] == N_TRAIN and summary["nTest"] == 360
    assert summary["firstResultSeconds"] > 0
    assert summary["accuracy"] > MIN_ACCURACY, summary
    assert "final test accuracy" in text
