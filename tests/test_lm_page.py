"""The "Complete" page (site/lm.html, issue 24 item 4) in headless Chromium with WebGPU
(SwiftShader): a tiny sharded GPT-2 and its tokenizer.json (tests/browser/fixtures/lm_tiny,
written with transformers and tokenizers) served from site/data/, loaded by the page's worker
through torchweb.models, and a greedy completion streamed back; its ids must be transformers'
greedy tokens for the same prompt."""

import json
import os
import shutil

import pytest

from page_helpers import SITE, finished_page, publish_site, require_chromium, served_chromium

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser", "fixtures", "lm_tiny")


@pytest.mark.browser
def test_complete_page_streams_transformers_greedy_tokens():
    require_chromium("the Complete page test")
    with open(os.path.join(FIXTURE, "expected.json")) as f:
        want = json.load(f)
    data = os.path.join(SITE, "data", "lm_tiny")
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(FIXTURE, data)
    publish_site()
    new = len(want["tokens"]) - len(want["ids"])
    from urllib.parse import quote
    with served_chromium() as (driver, base):
        url = f"{base}lm.html?model=data/lm_tiny/&greedy=1&n={new}&prompt={quote(want['prompt'])}"
        status, text, summary, console = finished_page(driver, url, 300, "torchwebLM")
        shown = driver.execute_script("return document.getElementById('completion').textContent;")
        source = driver.execute_script("return document.getElementById('source').textContent;")
        bad_status, _, bad, _ = finished_page(driver, f"{base}lm.html?model=data/no_such_model/", 300, "torchwebLM")
    assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"
    assert summary["errors"] == [], summary["errors"]
    assert summary["adapter"], "the page did not name the WebGPU adapter"
    assert summary["model"]["type"] == "gpt2"
    gen = summary["generations"][0]
    assert gen["promptIds"] == want["ids"]
    assert gen["ids"] == want["tokens"]
    assert gen["n"] == new and gen["tokensPerSecond"] > 0
    assert shown == want["text"]              # the prompt, then the streamed pieces
    assert "class GPT2LMHeadModel" in source
    assert bad_status == "ERROR" and "config.json not found" in bad["errors"][0], bad    # a wrong URL says so
