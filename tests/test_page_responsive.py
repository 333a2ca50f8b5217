"""The tab stays responsive while a demo trains (issue 22): the GPT page (site/gpt.html) trains in
its module Web Worker, and the page's own thread keeps drawing frames meanwhile. A recorder
injected before the page's scripts (CDP Page.addScriptToEvaluateOnNewDocument) notes every
requestAnimationFrame delta from the page's start to its DONE; the test checks the frames while
the worker trains (from its first loss point to the last).

For contrast, the same soak run on the page's own thread (bench/soak_page.py without --worker)
froze it for seconds: p99 3.5 s, max 5.3 s on SwiftShader here. Headless Chromium draws at
60 Hz (16.7 ms); this machine's two cores are shared with the worker's SwiftShader threads (and
other jobs), so the bounds are loose: half the frames within 2 frames' time, none over 1 s."""

import pytest

from page_helpers import finished_page, publish_site, require_chromium, served_chromium

PAGE = ("gpt.html?steps=30&batch=16&every=3&sampleEvery=0&length=8&lr=0.02"
        "&layers=1&embd=32&heads=1&block=16")
RECORDER = """
globalThis.torchwebFrames = [];
(function tick(last) {
  requestAnimationFrame((t) => {
    if (last !== undefined) globalThis.torchwebFrames.push([t, t - last]);
    tick(t);
  });
})();
"""
P50_MS, MAX_MS = 34, 1000


def _quantile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


@pytest.mark.browser
def test_page_draws_while_the_worker_trains():
    require_chromium("the page responsiveness test")
    publish_site()
    with served_chromium() as (driver, base):
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        status, text, summary, console = finished_page(driver, base + PAGE, 300, "torchwebGPT")
        frames = driver.execute_script("return globalThis.torchwebFrames;")
    assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"
    assert summary["finished"] and summary["errors"] == [], summary["errors"]
    # the training window on the frames' clock (from navigation): the summary's seconds count
    # from the page script's start, a fraction of a second later, so the window starts early by
    # that much, still after the worker's first steps
    start_ms = 1000 * summary["firstResultSeconds"]
    end_ms = 1000 * summary["totalSeconds"]
    during = [d for t, d in frames if start_ms <= t <= end_ms]
    assert end_ms - start_ms > 1000, (start_ms, end_ms)   # a run long enough to say something
    assert len(during) > 20, (len(during), start_ms, end_ms)
    p50, p95, worst = _quantile(during, 0.5), _quantile(during, 0.95), max(during)
    print(f"\nframe times while the worker trained ({(end_ms - start_ms) / 1000:.1f} s, {len(during)} frames): "
          f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {worst:.1f} ms")
    assert p50 <= P50_MS and worst <= MAX_MS, (p50, p95, worst)
