"""The Playground page (site/playground.html, issue 10) in headless Chromium with WebGPU
(SwiftShader), driven through its buttons with Selenium:

1. the Share button's link round-trips: opened afresh it shows the same code (non-ASCII and
   all) and runs nothing until Run is clicked;
2. Run on that code prints what the host's real PyTorch prints for the same code, and its plot
   carries PyTorch's values; the tensor tour example opened with ?autorun=1 (tests only) does
   too, and the page reports its time to first output;
3. an error in the code shows a Python traceback that starts in the person's code, and the same
   worker runs the next program; Stop ends a program that never ends and a fresh worker runs;
4. #example=NAME loads that example, and nothing runs.
5. a link with &weights=URL hands the URL to the code as WEIGHTS_URL;
6. without WebGPU (Chromium without --enable-unsafe-webgpu) the page says so plainly.
Each test opens the page anew (Pyodide boots each time): about 15 to 60 s each here.
Set TORCHWEB_PLAYGROUND_SCREENSHOT=path.png to save a screenshot after the tensor tour."""

import contextlib
import io
import math
import os
import re
import sys
import time

import pytest

from page_helpers import SITE, publish_site, require_chromium, run_page, served_chromium

PLAYGROUND = os.path.join(SITE, "demos", "playground")

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
STATE = "return globalThis.torchwebPlayground || null;"

# Small, quick on SwiftShader; the comment and the tab check that the link keeps any text.
CODE = """import torch
from playground import plot

x = torch.linspace(-2.0, 2.0, 9)
w = torch.tensor([0.5, -1.0, 2.0])
feats = torch.stack([x, x ** 2, torch.sin(x)], dim=1)   # 9 x 3
y = feats @ w
if True:
\tprint("y", [round(v, 5) for v in y.tolist()])
print("softmax max", round(torch.softmax(y, 0).max().item(), 6))
plot(x, y, title="y(x)")
# a comment: héllo ✓ → 🔥
"""
BAD = "import torch\nprint('before the error')\nx = torch.ones(2)\ny = x / not_defined\n"
FOREVER = "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.05)\n"


def host_run(code):
    """(stdout, figures) of code run by CPython with the real PyTorch and playground.py."""
    import torch  # noqa: F401  (the oracle)
    sys.path.insert(0, PLAYGROUND)
    try:
        import playground
    finally:
        sys.path.remove(PLAYGROUND)
    playground.figures.clear()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<host>", "exec"), {"__name__": "__main__"})
    return out.getvalue(), [dict(f) for f in playground.figures]


def numbers(text):
    return [float(v) for v in NUMBER.findall(text)]


def assert_close(got, want, tol=1e-4):
    assert len(got) == len(want), (got, want)
    bad = [(a, b) for a, b in zip(got, want) if not math.isclose(a, b, rel_tol=tol, abs_tol=tol)]
    assert not bad, bad


@pytest.fixture(scope="module")
def page():
    require_chromium("the Playground page test")
    publish_site()
    with served_chromium() as (driver, base):
        yield driver, base + "playground.html"


def open_page(driver, url):
    driver.get("about:blank")      # a hash-only change would not reload the page
    driver.get(url)
    return wait(driver, "s && s.loaded", 30)


def wait(driver, cond, timeout):
    """Wait until the JS condition on s (the page's state) holds; returns the state."""
    deadline = time.monotonic() + timeout
    while True:
        s = driver.execute_script(f"const s = globalThis.torchwebPlayground; return ({cond}) ? s : null;")
        if s:
            return s
        if time.monotonic() > deadline:
            st = driver.execute_script(STATE)
            out = driver.execute_script("return document.getElementById('output').textContent;")
            raise AssertionError(f"timed out waiting for {cond}: state {st}\noutput:\n{out}\n"
                                 f"{run_page.console_log(driver)}")
        time.sleep(0.2)


def set_code(driver, code):
    """Put code in the editor (CodeMirror, or the plain textarea without the bundle)."""
    driver.execute_script("globalThis.torchwebPlaygroundEditor.set(arguments[0]);", code)


def click(driver, button):
    driver.find_element("id", button).click()


def run_and_wait(driver, timeout=60):
    runs = driver.execute_script(STATE)["runs"]
    click(driver, "run")
    s = wait(driver, f"s.runs === {runs + 1} && !s.running", timeout)
    status, text = driver.execute_script(
        "const o = document.getElementById('output'); return [o.dataset.status, o.textContent];")
    return s, status, text


@pytest.mark.browser
def test_share_link_round_trip_then_run(page):
    driver, url = page
    open_page(driver, url)
    set_code(driver, CODE)
    click(driver, "share")
    link = wait(driver, "s.shared", 10)["shared"]
    assert link == driver.find_element("id", "link").get_attribute("value")
    assert link == driver.current_url and "#code=" in link and "autorun" not in link
    # opened afresh: the same code, and nothing runs, even once the worker is ready
    s = open_page(driver, link)
    assert driver.find_element("id", "editor").get_attribute("value") == CODE
    s = wait(driver, "s.ready", 60)
    time.sleep(1.0)
    s = driver.execute_script(STATE)
    out = driver.find_element("id", "output")
    assert s["runs"] == 0 and out.text == "" and out.get_attribute("data-status") == "idle"
    assert s["adapter"] and s["device"] == "webgpu", s
    assert "WebGPU: " in driver.find_element("id", "adapter").text
    # Run: the output and the plot are the host's real PyTorch's
    s, status, text = run_and_wait(driver)
    want_text, want_figs = host_run(CODE)
    assert status == "DONE", text
    assert NUMBER.sub("#", text) == NUMBER.sub("#", want_text), (text, want_text)
    assert_close(numbers(text), numbers(want_text))
    assert [f["title"] for f in s["figures"]] == ["y(x)"] == [f["title"] for f in want_figs]
    assert_close(s["figures"][0]["xs"], want_figs[0]["xs"])
    assert_close(s["figures"][0]["ys"], want_figs[0]["ys"])
    assert driver.find_elements("css selector", "#plots canvas[data-title='y(x)']")
    assert s["last"]["ok"] and s["last"]["device"].startswith("webgpu")
    assert s["errors"] == []


@pytest.mark.browser
def test_example_autorun_matches_pytorch(page):
    """The tensor tour, opened with ?autorun=1 (for tests only): PyTorch's numbers and plots."""
    driver, url = page
    t0 = time.monotonic()
    open_page(driver, url + "?autorun=1#example=tensor_tour")
    s = wait(driver, "s.runs === 1 && !s.running", 80)
    text = driver.find_element("id", "output").text
    with open(os.path.join(PLAYGROUND, "examples", "tensor_tour.py")) as f:
        want_text, want_figs = host_run(f.read())
    drop_device = lambda t: "\n".join(ln for ln in t.splitlines() if not ln.startswith("device:"))  # noqa: E731
    assert "device: webgpu" in text
    assert_close(numbers(drop_device(text)), numbers(drop_device(want_text)))
    assert [f["title"] for f in s["figures"]] == [f["title"] for f in want_figs]
    for got, want in zip(s["figures"], want_figs):
        assert_close(got["ys"], want["ys"])
    shot = os.environ.get("TORCHWEB_PLAYGROUND_SCREENSHOT")
    if shot:
        driver.set_window_size(1100, 1500)
        driver.save_screenshot(shot)
    print(f"\nplayground on {s['adapterName']}: page open -> worker ready {s['readySeconds']:.1f} s, "
          f"-> first output {s['firstOutputSeconds']:.1f} s ({s['firstOutputAfterRun']:.1f} s after Run), "
          f"run {s['last']['seconds']:.1f} s; wall {time.monotonic() - t0:.1f} s")
    assert 0 < s["firstOutputSeconds"] and "from page open to the first output" in \
        driver.find_element("id", "first").text


@pytest.mark.browser
def test_error_shows_traceback_and_worker_stays_usable(page):
    driver, url = page
    open_page(driver, url)
    set_code(driver, BAD)
    s, status, text = run_and_wait(driver)
    assert status == "ERROR" and not s["last"]["ok"]
    assert text.startswith("before the error\n")
    assert "Traceback (most recent call last):" in text
    assert 'File "<playground>", line 4, in <module>' in text
    assert "y = x / not_defined" in text       # the source line, as Python shows it
    assert "NameError: name 'not_defined' is not defined" in text
    assert "_run" not in text and "pyodide" not in text   # the runner's frames are left out
    assert driver.find_elements("css selector", "#output .stderr")
    # the same worker runs the next program
    set_code(driver, CODE)
    s, status, text = run_and_wait(driver)
    assert status == "DONE", text
    assert_close(numbers(text), numbers(host_run(CODE)[0]))
    # Stop: a program that never ends is cut off and a fresh worker runs the next one
    set_code(driver, FOREVER)
    click(driver, "run")
    wait(driver, "s.running && document.getElementById('output').textContent.includes('started')", 30)
    click(driver, "stop")
    s = wait(driver, "!s.running", 5)
    assert "[stopped" in driver.find_element("id", "output").text
    set_code(driver, CODE)
    s, status, text = run_and_wait(driver, 90)
    assert status == "DONE", text
    assert_close(numbers(text), numbers(host_run(CODE)[0]))


@pytest.mark.browser
def test_example_link_loads_the_example(page):
    driver, url = page
    open_page(driver, url + "#example=xor_mlp")
    with open(os.path.join(PLAYGROUND, "examples", "xor_mlp.py")) as f:
        assert driver.find_element("id", "editor").get_attribute("value") == f.read()
    assert driver.find_element("id", "examples").get_attribute("value") == "xor_mlp"
    wait(driver, "s.ready", 60)
    time.sleep(0.5)
    s = driver.execute_script(STATE)
    assert s["runs"] == 0 and driver.find_element("id", "output").text == ""
    assert s["errors"] == []
    # the editor is CodeMirror (scripts/build_site.py bundles it), with Python's highlighting;
    # its keys: Enter after a colon indents four spaces, Tab indents, Ctrl+Enter runs
    from selenium.webdriver.common.keys import Keys
    assert s["editor"] == "codemirror", "site/vendor/codemirror.js was not built (scripts/build_site.py)"
    assert not driver.find_element("id", "editor").is_displayed()
    assert driver.find_elements("css selector", ".cm-editor .cm-content [class^='tok-'], .cm-editor .cm-line span")
    set_code(driver, "")
    editor = driver.find_element("css selector", ".cm-editor .cm-content")
    editor.click()
    editor.send_keys("x = 1\n", Keys.TAB, "y = 2")
    code = lambda: driver.find_element("id", "editor").get_attribute("value")  # noqa: E731  (its mirror)
    assert code() == "x = 1\n    y = 2", repr(code())
    set_code(driver, "")
    editor.send_keys("if True:\n", "print(6 * 7")     # the closing bracket comes by itself
    assert code() == "if True:\n    print(6 * 7)", repr(code())
    editor.send_keys(Keys.CONTROL, Keys.ENTER)
    s = wait(driver, "s.runs === 1 && !s.running", 30)
    assert driver.find_element("id", "output").text == "42" and s["last"]["ok"]


WEIGHTS_CODE = """import torch
# WEIGHTS_URL comes from the link's &weights=
state = torch.hub.load_state_dict_from_url(WEIGHTS_URL)
model = torch.nn.Linear(3, 2)
model.load_state_dict(state)
print("out", [round(v, 5) for v in model(torch.tensor([[1.0, -2.0, 0.5]])).view(-1).tolist()])
"""


@pytest.mark.browser
def test_weights_url_in_the_link(page):
    """A link with &weights=URL: the field shows it, and the code loads the checkpoint (saved by
    the host's PyTorch with torch.save) through WEIGHTS_URL, giving PyTorch's output."""
    import torch
    driver, url = page
    torch.manual_seed(3)
    ref = torch.nn.Linear(3, 2)
    name = f"playground-test-weights-{os.getpid()}.pt"
    path = os.path.join(run_page.SITE, "data", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(ref.state_dict(), path)
    try:
        weights = url.rsplit("/", 1)[0] + "/data/" + name
        open_page(driver, url)
        set_code(driver, WEIGHTS_CODE)
        driver.find_element("id", "weights").send_keys(weights)
        click(driver, "share")
        link = wait(driver, "s.shared", 10)["shared"]
        assert "&weights=" in link
        open_page(driver, link)
        assert driver.find_element("id", "editor").get_attribute("value") == WEIGHTS_CODE
        assert driver.find_element("id", "weights").get_attribute("value") == weights
        s, status, text = run_and_wait(driver)
        assert status == "DONE", text
        with torch.no_grad():
            want = ref(torch.tensor([[1.0, -2.0, 0.5]])).view(-1).tolist()
        assert_close(numbers(text), want)
    finally:
        os.remove(path)


@pytest.mark.browser
def test_without_webgpu_says_so_and_runs_plain_python():
    """Chromium without --enable-unsafe-webgpu (no adapter in headless Linux): the page says
    WebGPU is missing, names no device (numpy cannot load offline here), and plain Python runs."""
    publish_site()
    with served_chromium(webgpu=False) as (driver, base):
        open_page(driver, base + "playground.html")
        s = wait(driver, "s.ready", 60)
        assert s["adapter"] is None and s["device"] is None
        shown = driver.find_element("id", "adapter").text
        assert "No WebGPU here" in shown and "numpy could not load" in shown
        assert driver.find_element("id", "device").text == "none"
        set_code(driver, "print(sum(i * i for i in range(10)))\n")
        s, status, text = run_and_wait(driver)
        assert status == "DONE" and text == "285\n", text
