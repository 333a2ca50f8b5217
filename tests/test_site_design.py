"""The site as a whole (issue 23, "a site people enjoy"): one design and one header on every page,
the docs rendered as pages with working "Open in playground" links, the landing page's live demo,
and pages that hold at a phone's width.

Statically: every page of site/ links site/site.css, has a viewport and carries the header
scripts/build_site.py writes; the docs pages (README.md and docs/*.md, rendered by build_site.py)
hold every Python example of the Markdown, each whole one (fragments are left out) with a
playground link whose #code= inflates to that example's text (read from the Markdown here).

In headless Chromium with WebGPU (SwiftShader), served with the site's CSP: the landing page
trains the digits CNN (a short run), shows its guesses for held-out digits, and classifies a
stroke drawn with the pointer on its pad (a vertical stroke: ink in the middle columns only, in
every row); no page scrolls sideways at 375 px; a docs page's "Open in playground" opens the
Playground with that code shown and nothing run. Screenshots (desktop, phone, dark) are taken on
the way: into a temporary folder, or into TORCHWEB_SCREENSHOTS (docs/screenshots to refresh the
committed ones).
"""

import base64
import glob
import os
import re
import tempfile
import time
import zlib

import pytest

from page_helpers import ROOT, SITE, finished_page, publish_site, require_chromium, serve, served_chromium
import build_site

PAGES = sorted(glob.glob(os.path.join(SITE, "*.html")))
FENCE = re.compile(r"^```(?:python|py)\n(.*?)^```", re.S | re.M)
PHONE, DESKTOP = (375, 812), (1100, 1000)


def test_every_page_shares_the_design_and_the_header():
    assert len(PAGES) >= 9, PAGES
    for page in PAGES:
        name = os.path.basename(page)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        assert html.count(build_site.header_html(name)) == 1, f"{name}: run scripts/build_site.py --headers-only"
        assert '<link rel="stylesheet" href="./site.css">' in html, name
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html, name
        assert "<main" in html, name
    # the old per-page stylesheets are gone: one design
    assert not glob.glob(os.path.join(SITE, "*_page.css"))
    assert build_site.CSP == serve.CSP


def inflate_link(href):
    code = href.split("#code=", 1)[1]
    raw = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
    return zlib.decompress(raw, -15).decode("utf-8")


@pytest.fixture(scope="module")
def docs():
    out = tempfile.mkdtemp(prefix="torchweb-docs-")
    build_site.render_docs(out)
    return out


def test_docs_render_with_playground_links(docs):
    import html as html_mod
    sources = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    examples = 0
    for src in sources:
        name = "index" if src.endswith("README.md") else os.path.basename(src)[:-3]
        with open(os.path.join(docs, name + ".html"), encoding="utf-8") as f:
            page = f.read()
        assert f'<meta http-equiv="Content-Security-Policy" content="{serve.CSP}">' in page, name
        assert build_site.header_html(f"docs/{name}.html", "../") in page, name
        assert not re.search(r"<script\b", page), name
        with open(src, encoding="utf-8") as f:
            fences = FENCE.findall(f.read())
        links = [inflate_link(html_mod.unescape(h)) for h in
                 re.findall(r'<a class="open-in-playground" href="([^"]+)"', page)]
        whole = [c for c in fences if build_site.free_names(c) == set()]
        # each whole Python example of the Markdown, linked with its exact text; fragments not
        assert sorted(links) == sorted(whole), (name, [c[:60] for c in links], [c[:60] for c in whole])
        examples += len(whole)
    assert examples >= 3
    # the API support matrix, as a table
    with open(os.path.join(docs, "api.html"), encoding="utf-8") as f:
        api = f.read()
    assert re.search(r"<tr>\s*<td>torch.nn.functional</td>\s*<td>\d+</td>", api)
    assert "readback.html" in open(os.path.join(docs, "index.html"), encoding="utf-8").read()


def test_only_whole_examples_get_a_playground_link():
    assert build_site.free_names("import torch\nx = torch.ones(2)\nprint(await x.sum().item_async())") == set()
    assert build_site.free_names("for x, y in batches:\n    loss = model(x)") == {"batches", "model"}
    assert build_site.free_names("try:\n    f()\nexcept OSError as e:\n    print(e)\ndef f(a):\n    return a") == set()
    assert build_site.free_names("%pip install torchweb") is None
    assert build_site.is_python_example("python", "import torchweb as torch\nprint(torch.ones(1))")
    assert not build_site.is_python_example("python", "model = torch.compile(model)")
    assert not build_site.is_python_example("js", "import torch")
    assert not build_site.is_python_example("", "print(1)")      # unmarked, and no torch


def test_the_editor_bundle_is_built():
    if not os.path.exists(build_site.ESBUILD):
        pytest.fail("node_modules/.bin/esbuild is missing: scripts/setup.sh installs CodeMirror and esbuild")
    path = build_site.bundle_editor()
    with open(path, encoding="utf-8") as f:
        js = f.read()
    assert "EditorView" in js or "cm-editor" in js
    from test_site_csp import STRING_EVAL
    assert not STRING_EVAL.search(js), "the editor bundle evaluates strings: the CSP would block it"


# ---- in the browser

@pytest.fixture(scope="module")
def browser():
    require_chromium("the site design test")
    publish_site()
    import site_data
    try:
        site_data.publish_digits(SITE)
    except (site_data.fetch_digits.FetchError, OSError) as e:
        pytest.skip(f"the digits cannot be fetched: {e}")
    with served_chromium(csp=serve.CSP) as (driver, base):
        yield driver, base


def screenshot_dir():
    d = os.environ.get("TORCHWEB_SCREENSHOTS") or os.path.join(tempfile.gettempdir(), "torchweb-screenshots")
    os.makedirs(d, exist_ok=True)
    return d


def view(driver, size, dark=False):
    w, h = size
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
        {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})


def shoot(driver, name):
    for size, suffix, dark in ((DESKTOP, "", False), (PHONE, "-phone", False), (DESKTOP, "-dark", True)):
        view(driver, size, dark)
        time.sleep(0.3)
        path = os.path.join(screenshot_dir(), f"site-{name}{suffix}.png")
        driver.save_screenshot(path)
        assert os.path.getsize(path) > 10_000, path
    view(driver, DESKTOP)


@pytest.mark.browser
def test_landing_page_trains_and_classifies_a_drawing(browser):
    driver, base = browser
    view(driver, PHONE)
    # a short run; refreshing the committed screenshots, a longer one (the guesses are then right)
    url = "index.html?epochs=2" if os.environ.get("TORCHWEB_SCREENSHOTS") else "index.html?epochs=1&train=200"
    status, text, home, console = finished_page(driver, base + url, 600, "torchwebHome")
    assert status == "DONE", f"{text[-3000:]}\n{console}"
    assert home["finished"] and home["errors"] == [] and home["adapter"], home
    assert [h["epoch"] for h in home["history"]] == list(range(1, home["epochs"] + 1)) and home["nTest"] == 360
    s = home["samples"]
    assert len(s["labels"]) == len(s["preds"]) == len(s["probs"]) == 8
    for probs, pred in zip(s["probs"], s["preds"]):
        assert abs(sum(probs) - 1) < 1e-4 and probs.index(max(probs)) == pred
    assert f"held-out digits {' '.join(map(str, s['labels']))}: guessed {' '.join(map(str, s['preds']))}" in text
    # a vertical stroke drawn with the pointer on the pad (it takes the page's width on a phone)
    from selenium.webdriver.common.action_chains import ActionChains
    pad = driver.find_element("id", "pad")
    h = pad.size["height"]
    ActionChains(driver).move_to_element_with_offset(pad, 0, -h // 3).click_and_hold() \
        .move_by_offset(0, h // 3).move_by_offset(0, h // 3).release().perform()
    deadline = time.monotonic() + 30
    while True:
        drawn = driver.execute_script("return globalThis.torchwebHome.drawn;")
        if drawn and drawn.get("probs"):
            break
        assert time.monotonic() < deadline, drawn
        time.sleep(0.2)
    px = drawn["pixels"]
    assert len(px) == 64 and all(0 <= v <= 16 for v in px)
    cols = {i % 8 for i, v in enumerate(px) if v > 0}
    rows = {i // 8 for i, v in enumerate(px) if v > 0}
    assert cols <= {2, 3, 4, 5} and rows == set(range(8)), px
    assert abs(sum(drawn["probs"]) - 1) < 1e-4
    assert driver.find_element("id", "guess").text == str(drawn["guess"])
    shoot(driver, "index")


SIDEWAYS = "return [document.documentElement.scrollWidth, window.innerWidth];"


@pytest.mark.browser
def test_no_page_scrolls_sideways_on_a_phone(browser):
    driver, base = browser
    view(driver, PHONE)
    for page in [os.path.basename(p) for p in PAGES] + ["docs/index.html", "docs/api.html", "docs/nn.html"]:
        driver.get("about:blank")
        driver.get(base + page)
        time.sleep(0.5)
        scroll, width = driver.execute_script(SIDEWAYS)
        assert scroll <= width, f"{page} is {scroll} px wide on a {width} px phone"
    view(driver, DESKTOP)


@pytest.mark.browser
def test_docs_example_opens_in_the_playground(browser):
    driver, base = browser
    with open(os.path.join(ROOT, "docs", "readback.md"), encoding="utf-8") as f:
        first = FENCE.findall(f.read())[0]
    driver.get("about:blank")
    driver.get(base + "docs/readback.html")
    link = driver.find_element("css selector", "a.open-in-playground")
    driver.execute_script("arguments[0].previousElementSibling.scrollIntoView({block: 'center'});", link)
    shoot(driver, "docs-readback")
    link.click()
    deadline = time.monotonic() + 30
    while not driver.execute_script("const s = globalThis.torchwebPlayground; return s && s.loaded;"):
        assert time.monotonic() < deadline, "the playground did not open the link"
        time.sleep(0.2)
    assert "playground.html#code=" in driver.current_url
    assert driver.find_element("id", "editor").get_attribute("value") == first
    time.sleep(1.0)
    s = driver.execute_script("return globalThis.torchwebPlayground;")
    assert s["runs"] == 0 and s["editor"] == "codemirror"
    assert driver.find_element("id", "output").get_attribute("data-status") == "idle"
    assert "press Run" in driver.find_element("id", "note").text
    shoot(driver, "playground")
