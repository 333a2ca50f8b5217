"""The "Complete" page (site/lm.html, issue 24 item 4) in headless Chromium with WebGPU
(SwiftShader): a tiny sharded GPT-2 and its tokenizer.json (tests/browser/fixtures/lm_tiny,
written with transformers and tokenizers) served from site/data/, loaded by the page's worker
through torchweb.models, and a greedy completion streamed back; its ids must be transformers'
greedy tokens for the same prompt. The page's time to first token (issue 24's target) is checked
on a first visit (fresh profile: the weights come from the network) and a second one in the same
profile (from the browser's Cache API): its phases, their sum, the bytes of the checkpoint's
files and of tokenizer.json, and where each came from."""

import json
import os

import pytest

from page_helpers import SITE, finished_page, publish_site, require_chromium, served_chromium
from site_data import publish_lm_fixture

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser", "fixtures", "lm_tiny")


@pytest.mark.browser
def test_complete_page_streams_transformers_greedy_tokens():
    require_chromium("the Complete page test")
    with open(os.path.join(FIXTURE, "expected.json")) as f:
        want = json.load(f)
    publish_lm_fixture(SITE)
    publish_site()
    new = len(want["tokens"]) - len(want["ids"])
    from urllib.parse import quote
    with served_chromium() as (driver, base):
        url = f"{base}lm.html?model=data/lm_tiny/&greedy=1&n={new}&prompt={quote(want['prompt'])}"
        status, text, summary, console = finished_page(driver, url, 300, "torchwebLM")
        page_time = driver.execute_script("return performance.now() / 1000;")
        shown = driver.execute_script("return document.getElementById('completion').textContent;")
        source = driver.execute_script("return document.getElementById('source').textContent;")
        ttft_shown = driver.execute_script("return document.getElementById('ttft').textContent;")
        # same profile, as a visitor would: the URL names the model, the prompt is typed once it is ready
        warm_status, warm_text, warm = _typed_prompt(driver, f"{base}lm.html?model=data/lm_tiny/&greedy=1&n={new}",
                                                     want["prompt"])
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

    # time to first token: a cold visit (weights over the network), then a warm one (Cache API)
    assert warm_status == "DONE", warm_text[-4000:]
    assert warm["generations"][0]["ids"] == want["tokens"]
    checkpoint_bytes = sum(os.path.getsize(os.path.join(FIXTURE, f)) for f in os.listdir(FIXTURE)
                           if f == "config.json" or f.startswith("model"))    # what from_pretrained reads
    for visit, got, source_of_weights in (("cold", summary, "network"), ("warm", warm, "cache")):
        first = got["firstToken"]
        print(f"{visit}: first token in {first['seconds']:.2f} s:",
              ", ".join(f"{p['name']} {p['seconds']:.2f}" for p in first["phases"]))
        assert [p["key"] for p in first["phases"]] == ["worker", "pyodide", "import", "device", "weights", "model",
                                                       "tokenizer", "prefill", "first"], first
        assert all(p["seconds"] >= 0 for p in first["phases"]), first
        assert abs(sum(p["seconds"] for p in first["phases"]) - first["seconds"]) < 1e-6
        assert first["fromNavigation"]
        assert first["waitLeftOut"] == 0 if visit == "cold" else first["waitLeftOut"] >= 0.5   # (the typing)
        assert first["weightsFrom"] == source_of_weights
        weights = first["phases"][4]
        assert weights["from"] == source_of_weights and weights["bytes"] == checkpoint_bytes
        tokenizer = first["phases"][6]         # tokenizer.json goes through the same cache as the weights
        assert tokenizer["from"] == source_of_weights, tokenizer
        assert tokenizer["bytes"] == os.path.getsize(os.path.join(FIXTURE, "tokenizer.json")), tokenizer
        # the worker's own prefill-to-first-token lies inside the last two phases
        assert first["phases"][-2]["seconds"] + first["phases"][-1]["seconds"] >= got["generations"][0]["firstSeconds"]
        wait = weights["seconds"] if source_of_weights == "network" else 0
        assert abs(first["withoutDownload"] - (first["seconds"] - wait)) < 1e-6
    assert 0 < summary["firstToken"]["seconds"] < page_time      # from navigation, before the page finished
    assert ttft_shown.startswith(f"first token in {summary['firstToken']['seconds']:.2f} s from page open"), ttft_shown


def _typed_prompt(driver, url, prompt, timeout=300):
    """Open url, wait for the Generate button, pause, type the prompt and press it: (status, log,
    summary) once the page's log says DONE or ERROR."""
    import time
    driver.get(url)
    deadline = time.monotonic() + timeout
    state = "return [!document.getElementById('go').disabled, document.getElementById('output').dataset.status];"
    while not driver.execute_script(state)[0] and driver.execute_script(state)[1] != "ERROR":
        assert time.monotonic() < deadline, "the Complete page never became ready"
        time.sleep(0.25)
    time.sleep(0.5)    # a visitor's pause: left out of the time to first token
    driver.execute_script("document.getElementById('prompt').value = arguments[0]; "
                          "document.getElementById('go').click();", prompt)
    while driver.execute_script(state)[1] not in ("DONE", "ERROR"):
        assert time.monotonic() < deadline, "the Complete page never finished"
        time.sleep(0.25)
    return (driver.execute_script(state)[1], driver.execute_script("return document.getElementById('output').textContent;"),
            driver.execute_script("return globalThis.torchwebLM;"))
