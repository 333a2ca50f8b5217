"""The "Search" page (site/minilm.html, issue 10) in headless Chromium with WebGPU (SwiftShader):
all-MiniLM-L6-v2's weights download into the Cache API, site/demos/minilm/model.py embeds the
built-in sentences on the GPU in a module worker, and a query given in the URL must rank them
as sentence-transformers does (its published scores for this example), with the adapter named
and no errors. About 35 s here; scripts/check_minilm_page.py also checks a second visit (from
the cache) and the Clear cache button."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_page  # noqa: E402
import serve  # noqa: E402
import site_minilm  # noqa: E402
import wheel  # noqa: E402

QUERY = "A man is eating pasta."
# sentence-transformers' README for all-MiniLM-L6-v2 (the PyTorch run of the same model agrees)
EXPECTED_TOP = ("A man is eating food.", 0.7035)


@pytest.mark.browser
def test_search_page():
    if not os.path.exists(os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")):
        pytest.fail("the Search page test needs Chromium (scripts/setup.sh installs it)")
    try:
        site_minilm.publish(run_page.SITE)
    except (site_minilm.fetch_minilm.FetchError, OSError) as e:
        pytest.skip(f"all-MiniLM-L6-v2 cannot be fetched (scripts/fetch_minilm.py): {e}")
    run_page.ensure_pyodide(run_page.SITE)
    wheel.publish(wheel.build())
    server, base = serve.start(run_page.SITE, 0)
    driver = run_page.chrome()
    try:
        status, text = run_page.wait_for_page(driver, base + "minilm.html?q=" + QUERY, 300, echo=False)
        summary = driver.execute_script("return globalThis.torchwebMiniLM || null;")
        console = run_page.console_log(driver) if status != "DONE" else ""
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"
    assert summary["errors"] == [], summary["errors"]
    assert summary["adapter"], "the page did not name the WebGPU adapter"
    assert str(summary["device"]).startswith("webgpu")
    search = summary["searches"][0]
    assert search["query"] == QUERY
    top_sentence, top_score = search["top"][0]
    assert top_sentence == EXPECTED_TOP[0]
    assert abs(top_score - EXPECTED_TOP[1]) < 2e-3, search["top"]
