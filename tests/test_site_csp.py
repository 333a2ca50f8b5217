"""The site is safe to share (issue 22, item 6).

Statically: every page of site/ carries the site's Content-Security-Policy (serve.CSP, the same
header scripts/serve.py sends; PyScript's two pages serve.PYSCRIPT_CSP, since PyScript evaluates
strings: tests/test_pyscript_page.py runs them under it), runs no inline script or inline event
handler, and no JavaScript of ours (site/, src/torchweb/_js/) evaluates strings.

In headless Chromium with WebGPU: each gallery page, served with the CSP as a header (which also
binds the module workers) and as its <meta>, runs its demo to the end with no CSP violation, seen
both by the page (securitypolicyviolation events, hooked before any script) and by the server
(the browser's reports, which come from the workers too). And a Playground link never runs its
code before Run is clicked, even with ?autorun=1, and shows hostile code as text.
"""

import glob
import os
import re
import shutil
import time

import pytest

from page_helpers import ROOT, SITE, finished_page, publish_site, require_chromium, serve, served_chromium
from test_playground_page import wait as playground_wait

PAGES = sorted(glob.glob(os.path.join(SITE, "*.html")))
OUR_JS = sorted(glob.glob(os.path.join(SITE, "**", "*.mjs"), recursive=True)
                + glob.glob(os.path.join(SITE, "*.js"))
                + glob.glob(os.path.join(ROOT, "src", "torchweb", "_js", "*.mjs")))
OUR_JS = [p for p in OUR_JS if os.sep + "pyodide" + os.sep not in p and os.sep + "pyscript" + os.sep not in p
          and os.sep + "lite" + os.sep not in p and os.sep + "wheels" + os.sep not in p]
STRING_EVAL = re.compile(r"\bnew\s+Function\b|(?<![.\w])eval\s*\(|\b(?:setTimeout|setInterval)\s*\(\s*[\"'`]")
# Python inside a JS string, not JS: the Playground's runner evaluates the person's code object
# in Pyodide, when Run is clicked.
PYTHON_IN_JS = {(os.path.join("site", "demos", "playground", "worker.mjs"), "r = eval(c, ns)")}
META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')
# Hooked into every document before its scripts: the page's own record of CSP violations.
HOOK = ("globalThis.__cspViolations = [];"
        "document.addEventListener('securitypolicyviolation', (e) => globalThis.__cspViolations.push("
        "`${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`));")


def test_every_page_carries_the_csp_and_no_inline_script():
    assert len(PAGES) >= 6, PAGES
    for page in PAGES:
        with open(page, encoding="utf-8") as f:
            html = f.read()
        want = serve.policy_for("/" + os.path.basename(page), serve.CSP)   # PyScript's pages: theirs
        assert META.findall(html) == [want], f"{page}: its CSP <meta> is not the header serve.py sends"
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag, f"{page}: inline script {tag} (the CSP blocks it)"
        assert not re.search(r"<[^>]+\son[a-z]+\s*=", html), f"{page}: an inline event handler"
        assert "javascript:" not in html, page


def test_the_csp_needs_no_eval():
    """The site's policy; PyScript's two pages alone add what PyScript needs (eval, blob: workers)."""
    assert [os.path.basename(p) for p in PAGES if serve.policy_for("/" + os.path.basename(p), serve.CSP) != serve.CSP] \
        == ["pyscript-worker.html", "pyscript.html"]
    assert serve.policy_for("/lite/lab/index.html", serve.CSP) is None   # JupyterLite's own needs
    directives = dict(d.strip().split(" ", 1) for d in serve.CSP.split(";"))
    assert directives["script-src"] == "'self' 'wasm-unsafe-eval'"
    assert "unsafe-eval" not in serve.CSP.replace("wasm-unsafe-eval", "")
    assert "'unsafe-inline'" not in directives["script-src"] and "data:" not in directives["script-src"]
    assert directives["object-src"] == "'none'"


def test_our_javascript_evaluates_no_strings():
    assert any(p.endswith("runtime.mjs") for p in OUR_JS) and len(OUR_JS) >= 10, OUR_JS
    for path in OUR_JS:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                code = line.split("//", 1)[0]
                if (os.path.relpath(path, ROOT), code.strip()) in PYTHON_IN_JS:
                    continue
                assert not STRING_EVAL.search(code), f"{path}:{n}: string eval: {line.strip()}"
    assert STRING_EVAL.search("const f = new Function('a', 'return a');")   # the pattern bites
    assert STRING_EVAL.search("setTimeout('alert(1)', 0)") and STRING_EVAL.search("x = eval(s)")
    assert not STRING_EVAL.search("model.eval()") and not STRING_EVAL.search("setTimeout(f, 0)")


@pytest.fixture(scope="module")
def csp_browser():
    """(driver, base, reports): site/ served with the CSP header reporting to reports, and a
    Chromium that hooks the violation listener into every document."""
    require_chromium("the CSP page test")
    publish_site()
    reports = []
    with served_chromium(csp=serve.CSP, on_report=reports.append) as (driver, base):
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK})
        yield driver, base, reports


def violations(driver, reports):
    time.sleep(0.5)    # reports are POSTed by the browser on its own time
    seen = driver.execute_script("return globalThis.__cspViolations || null;")
    assert seen is not None, "the violation hook did not run in the page"
    return seen + [f"{r.get('effective-directive')} blocked {r.get('blocked-uri')} at "
                   f"{r.get('source-file')}:{r.get('line-number')}" for r in reports]


# Gallery pages and the short runs their own page tests use: (page, summary global or None).
GALLERY = [
    ("index.html?epochs=1&train=200", "torchwebHome"),
    ("hello.html", None),
    ("gpt.html?steps=2&batch=64&every=1&sampleEvery=0&length=8&lr=0.02&layers=1&embd=32&heads=1&block=16",
     "torchwebGPT"),
    ("train.html?epochs=1&train=200", "torchwebTrain"),
    ("minilm.html?q=A man is eating pasta.", "torchwebMiniLM"),
    ("lm.html?model=data/lm_tiny/&greedy=1&n=4&prompt=The GPU", "torchwebLM"),
]


@pytest.mark.browser
@pytest.mark.parametrize("page,summary", GALLERY, ids=[p.split(".")[0] for p, _ in GALLERY])
def test_gallery_page_runs_under_the_csp(csp_browser, page, summary):
    driver, base, reports = csp_browser
    reports.clear()
    publish_data(page)
    status, text, state, console = finished_page(driver, base + page, 300, summary)
    assert status == "DONE", f"{page} under the CSP: {status}\n{text[-3000:]}\n{console}"
    if page == "hello.html":
        assert text.count("check: ok") == 2 and text.count("device: webgpu") == 2, text  # page and worker
    if state is not None:
        assert state.get("errors", []) == [], state.get("errors")
    assert violations(driver, reports) == []
    if not page.startswith("index"):        # the landing page's are test_site_design's, after a drawing
        from test_site_design import shoot  # the finished page, desktop, phone and dark (issue 23)
        shoot(driver, page.split(".")[0])


def publish_data(page):
    """The data a page needs in site/data/, as its own page test gets it (skip where it cannot)."""
    import site_data
    import site_minilm
    try:
        if page.startswith(("train", "index")):
            site_data.publish_digits(SITE)
        elif page.startswith("minilm"):
            site_minilm.publish(SITE)
        elif page.startswith("lm."):      # the tiny checkpoint of the browser tier's fixtures
            shutil.copytree(os.path.join(os.path.dirname(__file__), "browser", "fixtures", "lm_tiny"),
                            os.path.join(SITE, "data", "lm_tiny"), dirs_exist_ok=True)
    except (site_data.fetch_digits.FetchError, site_minilm.fetch_minilm.FetchError, OSError) as e:
        pytest.skip(f"{page}'s data cannot be fetched: {e}")


# The link's code: markup that would run if it were put into the page as HTML, and Python that
# prints a marker if it ever runs.
HOSTILE = ("# </textarea><img src=x id=pwned onerror=\"document.title='PWNED'\">\n"
           "print('RAN' + '-MARK')\n")


@pytest.mark.browser
def test_playground_link_shows_its_code_and_runs_nothing_before_run(csp_browser):
    driver, base, reports = csp_browser
    reports.clear()
    driver.get(base + "playground.html")
    wait = lambda cond, t: playground_wait(driver, cond, t)  # noqa: E731
    wait("s && s.loaded", 30)
    driver.execute_script("globalThis.torchwebPlaygroundEditor.set(arguments[0]);", HOSTILE)
    driver.find_element("id", "share").click()
    link = wait("s.shared", 10)["shared"]
    # opened afresh with ?autorun=1 (which runs examples for tests): the code shows, nothing runs
    autorun = link.replace("playground.html#", "playground.html?autorun=1#")
    assert autorun != link
    driver.get("about:blank")
    driver.get(autorun)
    wait("s && s.loaded", 30)
    wait("s.ready", 90)         # Pyodide and torchweb are up: a run could have started by now
    time.sleep(1.5)
    s = driver.execute_script("return globalThis.torchwebPlayground;")
    out = driver.find_element("id", "output")
    assert driver.find_element("id", "editor").get_attribute("value") == HOSTILE
    shown = driver.find_element("css selector", ".cm-editor .cm-content").text   # as text in CodeMirror
    assert "<img src=x id=pwned" in shown and "print('RAN' + '-MARK')" in shown, shown
    assert s["runs"] == 0 and not s["running"] and out.text == "", (s, out.text)
    assert out.get_attribute("data-status") == "idle"
    assert not driver.find_elements("id", "pwned") and driver.title != "PWNED"
    assert "press Run" in driver.find_element("id", "note").text
    # Run: now, and only now, the code runs
    driver.find_element("id", "run").click()
    s = wait("s.runs === 1 && !s.running", 60)
    assert out.text.strip() == "RAN-MARK" and out.get_attribute("data-status") == "DONE"
    assert not driver.find_elements("id", "pwned")
    assert violations(driver, reports) == []
