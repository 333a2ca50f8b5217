"""The "GPT" page (site/gpt.html, issue 10) in headless Chromium with WebGPU (SwiftShader):
Pyodide and the torchweb wheel load in a module Web Worker, site/demos/chargpt/model.py (plain
PyTorch code) trains a character-level GPT on the Sonnets, and then the page's own buttons:

- the loss at the last step is clearly lower than at the first; samples have the requested
  length and only characters of the text;
- Save downloads a .pt file that the host's PyTorch loads with weights_only=True into the same
  model class (model.py run with real torch): same state_dict keys and shapes, and real PyTorch's
  greedy sample from those weights is the page's;
- the Sample button (temperature 0) gives the same greedy text again;
- a fresh page that trains nothing (?steps=0) loads that file through its file input and gives
  the same greedy sample.

SwiftShader is slow on kernels with workgroup barriers (softmax: a workgroup per row; matmul
tiles; row reductions when there are under 1024 rows), so the page trains a tiny model through
its URL parameters (PAGE below): 4 steps of a 1-layer model 32 wide, then a second page loads
the saved file. Timings swing with the machine's load (a shared 2-core box): see the report
printed with -s. Set TORCHWEB_GPT_SCREENSHOT=path.png to save a screenshot of the trained page."""

import os
import time

import pytest
import torch

from model_files import load_file
from page_helpers import ROOT, finished_page, publish_site, require_chromium, run_page, served_chromium

DEMO = os.path.join(ROOT, "site", "demos", "chargpt")
STEPS, LENGTH, PROMPT = 4, 8, "Shall I "
# 64 windows of 16 characters: 1024 rows, so row reductions take the thread-per-row kernel
PAGE = (f"gpt.html?steps={STEPS}&batch=64&every=1&sampleEvery=0&length={LENGTH}&lr=0.02"
        f"&layers=1&embd=32&heads=1&block=16")
MIN_DROP = 0.5          # ln(61) = 4.11; PyTorch, same settings, seeds 0-2: 4.2-4.3 at step 1, 3.1-3.2 at step 4


def _wait(driver, script, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.25)
    errors = driver.execute_script("return globalThis.torchwebGPT && globalThis.torchwebGPT.errors;")
    raise AssertionError(f"timed out waiting for {what}; page errors: {errors}\n{run_page.console_log(driver)}")


def _wait_download(folder, timeout):
    path = os.path.join(folder, "chargpt.pt")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and not any(f.endswith(".crdownload") for f in os.listdir(folder)):
            return path
        time.sleep(0.25)
    raise AssertionError(f"no chargpt.pt downloaded into {folder}: {os.listdir(folder)}")


@pytest.mark.browser
def test_gpt_page(tmp_path):
    require_chromium("the GPT page test")
    start = time.monotonic()
    publish_site()
    downloads = str(tmp_path)
    with served_chromium() as (driver, base):
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        status, text, summary, console = finished_page(driver, base + PAGE, 240, "torchwebGPT")
        assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"

        from selenium.webdriver.common.by import By
        # the Sample button, greedy (temperature 0): the trained model's greedy text again
        temp = driver.find_element(By.ID, "temperature")
        temp.clear()
        temp.send_keys("0")
        driver.find_element(By.ID, "sample-btn").click()
        resampled = _wait(driver, "return globalThis.torchwebGPT.samples.find((s) => s.step === null);", 60,
                          "the Sample button's sample")
        driver.find_element(By.ID, "save-btn").click()
        saved = _wait_download(downloads, 60)
        trained = driver.execute_script("return globalThis.torchwebGPT;")
        # a fresh page that trains nothing (?steps=0) loads the file and samples from it
        status2, text2 = run_page.wait_for_page(driver, base + f"gpt.html?steps=0&length={LENGTH}", 120, echo=False)
        assert status2 == "DONE", text2[-4000:]
        driver.find_element(By.ID, "load-input").send_keys(saved)
        loaded = _wait(driver, "return globalThis.torchwebGPT.loaded;", 90, "the page to load chargpt.pt")
        final = driver.execute_script("return globalThis.torchwebGPT;")
        shot = os.environ.get("TORCHWEB_GPT_SCREENSHOT")
        if shot:
            driver.set_window_size(1000, 1300)
            driver.save_screenshot(shot)
    elapsed = time.monotonic() - start
    stages = [line for line in text.splitlines() if line.startswith(("[", "step ", "pyodide "))]
    print("\n" + "\n".join(stages))
    print(f"GPT page: first loss point {summary['firstResultSeconds']:.1f} s after page open, "
          f"training done {summary['totalSeconds']:.1f} s, whole test {elapsed:.1f} s")

    # the training run
    assert summary["finished"] and summary["errors"] == [], summary["errors"]
    assert summary["adapter"] and "adapter: " + summary["adapter"] in text
    assert summary["device"].startswith("webgpu")
    assert [h["step"] for h in summary["history"]] == list(range(1, STEPS + 1))
    first, last = summary["history"][0]["loss"], summary["history"][-1]["loss"]
    assert last < first - MIN_DROP, summary["history"]
    assert summary["firstResultSeconds"] > 0

    # samples: the requested length, from the text's alphabet
    with open(os.path.join(DEMO, "text.txt")) as f:
        alphabet = set(f.read())
    assert summary["vocab"] == "".join(sorted(alphabet))
    for s in (summary["greedy"], summary["finalSample"], loaded["greedy"], loaded["sample"]):
        assert len(s) == LENGTH and set(s) <= alphabet, repr(s)

    # the saved file, in real PyTorch: the same model class, keys and shapes, and the same greedy text
    assert resampled["text"] == summary["greedy"] and resampled["temperature"] == 0
    assert trained["saved"]["bytes"] == os.path.getsize(saved) and trained["errors"] == []
    ckpt = torch.load(saved, weights_only=True)
    gpt = load_file(os.path.join(DEMO, "model.py"), torch)
    assert ckpt["vocab"] == summary["vocab"]
    model = gpt.GPT(ckpt["vocab"], **ckpt["config"])
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in ckpt["state_dict"].items()} == expected
    model.load_state_dict(ckpt["state_dict"])
    assert gpt.sample(model, PROMPT, LENGTH, temperature=0) == summary["greedy"]

    # the file loaded into a page that trained nothing samples as the trained model did
    assert final["steps"] == 0 and final["history"] == []
    assert loaded["greedy"] == summary["greedy"] and loaded["device"].startswith("webgpu")
    assert final["errors"] == [], final["errors"]
