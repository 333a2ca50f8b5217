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

import pytest

from page_helpers import SITE, finished_page, publish_site, require_chromium, served_chromium
import site_data  # scripts/, on the path through page_helpers

EPOCHS, N_TRAIN = 1, 800
PAGE = f"train.html?epochs={EPOCHS}&train={N_TRAIN}"
MIN_ACCURACY = 0.5     # chance is 0.1; this short run reaches 0.70 (seeded)


@pytest.mark.browser
def test_train_page():
    require_chromium("the Train page test")
    try:
        site_data.publish_digits(SITE)
    except (site_data.fetch_digits.FetchError, OSError) as e:
        pytest.skip(f"scikit-learn's digits cannot be fetched (scripts/fetch_digits.py): {e}")
    publish_site()
    with served_chromium() as (driver, base):
        status, text, summary, console = finished_page(driver, base + PAGE, 240, "torchwebTrain")
        shot = os.environ.get("TORCHWEB_TRAIN_SCREENSHOT")
        if shot:
            driver.set_window_size(1000, 1100)
            driver.save_screenshot(shot)
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
