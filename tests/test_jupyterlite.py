"""The JupyterLite site (site/lite/, built by scripts/build_jupyterlite.py: local Pyodide with the
kernel's packages, the torchweb wheel for `%pip install`, no PyPI fallback) in headless Chromium,
offline: opens each notebook of site/notebooks/, runs all cells through window.jupyterapp and
checks the outputs:
- train.ipynb: WebGPU adapter, webgpu device, decreasing loss, fitted weights;
- the course (1_tensors_autograd, 2_train_cnn, 3_finetune_from_url): the lines their cells tagged
  "host" print are compared with the same cells run by the host's real PyTorch on "cpu"
  (tests/notebook_host.py): tensors, values and gradients to 1e-4; training (whose initial
  weights differ between the libraries) by its loss falling and a test accuracy no more than 10
  points under PyTorch's (or at least 70%, 7 times chance); the fine-tuning notebook's pretrained accuracy (same checkpoint) to 1e-2.
One build and one browser for the module; each notebook starts a fresh kernel (~20 s here); the
whole file ~130 s. TORCHWEB_NOTEBOOK_OUTPUT=/some/prefix- saves each notebook's output text.
Deselect with -m "not browser"."""

import json
import math
import os
import re
import time

import pytest

from notebook_host import numbers, printed, run_host
from page_helpers import require_chromium, run_page, served_chromium
import build_jupyterlite  # scripts/, on the path through page_helpers

KERNEL_STATUS = """
const app = window.jupyterapp; if (!app) return 'no app';
const w = app.shell.currentWidget; if (!w || !w.sessionContext) return 'no notebook';
const k = w.sessionContext.session && w.sessionContext.session.kernel;
return k ? k.status : 'no kernel';"""
# From the notebook's model, not the DOM: JupyterLab leaves cells scrolled out of view unrendered.
# Streams' text, HTML displays (as updated in place), errors' tracebacks.
OUTPUTS = """
const w = window.jupyterapp.shell.currentWidget; if (!w || !w.content || !w.content.model) return [];
const cells = w.content.model.cells, out = [];
for (let i = 0; i < cells.length; i++) {
  const c = cells.get(i); if (c.type !== 'code') continue;
  for (const o of c.outputs.toJSON()) {
    const join = (t) => Array.isArray(t) ? t.join('') : (t || '');
    if (o.output_type === 'stream') out.push(join(o.text));
    else if (o.output_type === 'error') out.push('Traceback\\n' + o.ename + ': ' + o.evalue + '\\n' + join(o.traceback));
    else if (o.data) out.push(join(o.data['text/html'] || o.data['text/plain']));
  }
}
return out;"""


def _wait(driver, script, done, timeout):
    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(script)
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


@pytest.fixture(scope="module")
def lite():
    require_chromium("the JupyterLite site")
    build_jupyterlite.build()
    # no COOP/COEP headers: see the build script
    with served_chromium(build_jupyterlite.SITE) as (driver, base):
        yield driver, base


def run_notebook(driver, base, name, last_key, timeout=150):
    """The text of every output of name after Run All, once a line `last_key: ...` or an error shows."""
    driver.get(base + "lite/lab/index.html?path=" + name)
    status = _wait(driver, KERNEL_STATUS, lambda s: s == "idle", 90)
    assert status == "idle", f"kernel not idle after 90 s: {status}\n{run_page.console_log(driver)[-5000:]}"
    driver.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells');")
    outs = _wait(driver, OUTPUTS, lambda o: any(last_key + ":" in t or "Traceback" in t or "Error" in t
                                                for t in o), timeout)
    text = "\n".join(outs)
    assert last_key + ":" in text and "Traceback" not in text, \
        f"{text[-5000:]}\nconsole:\n{run_page.console_log(driver)[-5000:]}"
    if os.environ.get("TORCHWEB_NOTEBOOK_OUTPUT"):
        with open(os.environ["TORCHWEB_NOTEBOOK_OUTPUT"] + name + ".txt", "w") as f:
            f.write(text)
    return text


@pytest.mark.browser
def test_jupyterlite_notebook_trains_on_webgpu(lite):
    text = run_notebook(*lite, "train.ipynb", "weight", 90)
    lines = {ln.split(":", 1)[0]: ln.split(":", 1)[1].strip() for ln in text.splitlines() if ":" in ln}
    assert "backend=browser-webgpu" in lines["adapter"], lines
    assert lines["device"].startswith("webgpu"), lines
    losses = [float(v) for v in lines["losses"].split()]
    assert len(losses) == 30 and all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 1e-3 * losses[0], losses


def host(name, base, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))   # torch.hub's download cache
    with open(os.path.join(build_jupyterlite.SITE, "data", "digits.json")) as f:
        digits = json.load(f)
    return run_host(os.path.join(build_jupyterlite.SITE, "notebooks", name), digits=digits, SITE=base,
                    WEIGHTS_URL=base + "data/digits_cnn_0to4.pt")


def assert_close(got, want, tol):
    g, w = numbers(got), numbers(want)
    assert len(g) == len(w) and all(math.isclose(a, b, rel_tol=tol, abs_tol=tol) for a, b in zip(g, w)), (got, want)


def mean(xs):
    return sum(xs) / len(xs)


@pytest.mark.browser
def test_course_1_tensors_and_autograd(lite, tmp_path, monkeypatch):
    driver, base = lite
    got = printed(run_notebook(driver, base, "1_tensors_autograd.ipynb", "b.grad"))
    want = host("1_tensors_autograd.ipynb", base, tmp_path, monkeypatch)
    assert want.keys() <= got.keys(), (want, got)
    for key in want:
        assert_close(got[key], want[key], 1e-4)
    assert_close(got["x.grad"], got["3x^2 + sin x + x cos x"], 1e-4)   # autograd = the formula


@pytest.mark.browser
def test_course_2_train_cnn_with_live_plot(lite, tmp_path, monkeypatch):
    driver, base = lite
    text = run_notebook(driver, base, "2_train_cnn.ipynb", "test accuracy", 240)
    got = printed(text)
    want = host("2_train_cnn.ipynb", base, tmp_path, monkeypatch)
    assert got["train"] == want["train"] == "1400 test: 397" and got["steps"] == want["steps"] == "42"
    first, last = numbers(got["first losses"]), numbers(got["last losses"])
    assert abs(first[0] - math.log(10)) < 0.3, first          # untrained: about chance
    assert mean(last) < 0.35 * mean(first), (first, last)
    acc, want_acc = float(got["test accuracy"]), float(want["test accuracy"])
    assert acc >= min(want_acc - 0.1, 0.7), (acc, want_acc)
    # the live plot: one SVG redrawn in place with a point per step; tqdm's bars
    plots = re.findall(r'<svg class="liveplot".*?points="([^"]*)"', text)
    assert len(plots) == 1 and len(plots[0].split()) == 42, plots
    # each epoch's last bar as the host's tqdm drew it (the bar and counts; not the rate and times)
    for epoch in ("epoch 1", "epoch 2", "epoch 3"):
        bar, want_bar = got[epoch].split(" [")[0], want[epoch].split(" [")[0]
        assert bar == want_bar == "100%|##########| 14/14", (epoch, got[epoch], want[epoch])


@pytest.mark.browser
def test_course_3_finetune_from_url(lite, tmp_path, monkeypatch):
    driver, base = lite
    got = printed(run_notebook(driver, base, "3_finetune_from_url.ipynb", "body unchanged", 180))
    want = host("3_finetune_from_url.ipynb", base, tmp_path, monkeypatch)
    assert got["checkpoint"] == want["checkpoint"]
    assert_close(got["pretrained accuracy on 0-4"], want["pretrained accuracy on 0-4"], 1e-2)
    first, last = numbers(got["first losses"]), numbers(got["last losses"])
    assert mean(last) < 0.5 * mean(first), (first, last)
    acc, want_acc = float(got["fine-tuned accuracy on 0-9"]), float(want["fine-tuned accuracy on 0-9"])
    assert acc >= min(want_acc - 0.1, 0.7), (acc, want_acc)
    assert got["body unchanged"] == want["body unchanged"] == "True"
