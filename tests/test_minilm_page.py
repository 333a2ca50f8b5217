"""The "Search" page (site/minilm.html, issue 10) in headless Chromium with WebGPU (SwiftShader):
all-MiniLM-L6-v2's weights download into the Cache API, site/demos/minilm/model.py embeds the
built-in sentences on the GPU in a module worker, and a query given in the URL must rank them
as sentence-transformers does (its published scores for this example), with the adapter named
and no errors. About 35 s here; scripts/check_minilm_page.py also checks a second visit (from
the cache) and the Clear cache button."""

import pytest

from page_helpers import SITE, finished_page, publish_site, require_chromium, served_chromium
import site_minilm  # scripts/, on the path through page_helpers

QUERY = "A man is eating pasta."
# sentence-transformers' README for all-MiniLM-L6-v2 (the PyTorch run of the same model agrees)
EXPECTED_TOP = ("A man is eating food.", 0.7035)


@pytest.mark.browser
def test_search_page():
    require_chromium("the Search page test")
    try:
        site_minilm.publish(SITE)
    except (site_minilm.fetch_minilm.FetchError, OSError) as e:
        pytest.skip(f"all-MiniLM-L6-v2 cannot be fetched (scripts/fetch_minilm.py): {e}")
    publish_site()
    with served_chromium() as (driver, base):
        status, text, summary, console = finished_page(driver, base + "minilm.html?q=" + QUERY, 300, "torchwebMiniLM")
    assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"
    assert summary["errors"] == [], summary["errors"]
    assert summary["adapter"], "the page did not name the WebGPU adapter"
    assert str(summary["device"]).startswith("webgpu")
    search = summary["searches"][0]
    assert search["query"] == QUERY
    top_sentence, top_score = search["top"][0]
    assert top_sentence == EXPECTED_TOP[0]
    assert abs(top_score - EXPECTED_TOP[1]) < 2e-3, search["top"]
