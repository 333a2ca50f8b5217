"""Readback in the browser (issue 9, target c): tensors of several dtypes and sizes (0, 1, 3
elements, 1M floats, float16, int64, bool, a transposed view, a slice) computed by torchweb on
WebGPU in headless Chromium (SwiftShader), read back through memoryview(t), to_memoryview, tolist
and their awaitable forms, compared with the same expressions run by PyTorch on the CPU; reads in
flight together; and 200 reads of varying sizes, after which the JS runtime's idle staging
buffers (stats()) stay bounded.

The page is tests/browser/fixtures/readback.html running readback_check.py (its CASES are the
expressions both sides evaluate); the repository root is served."""

import hashlib
import importlib.util
import json
import os
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "browser", "fixtures")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_page  # noqa: E402
import serve  # noqa: E402
import wheel  # noqa: E402

STAGING_KEEP, STAGING_BUDGET = 8, 64 << 20   # runtime.mjs's bounds on idle staging buffers
FORMATS = {torch.float32: "f", torch.float16: "e", torch.int32: "i", torch.int64: "q",
           torch.uint8: "B", torch.bool: "?"}


def _check_module():
    spec = importlib.util.spec_from_file_location("readback_check", os.path.join(FIXTURES, "readback_check.py"))
    src = open(spec.origin).read()
    head = src[:src.index("json_summary = await main()")]   # the page's top-level await: not here
    mod = {}
    exec(compile(head, spec.origin, "exec"), mod)
    return mod


def _expected(t, list_max):
    t = t.contiguous()
    data = t.numpy().tobytes()
    view = {"format": FORMATS[t.dtype], "shape": list(t.shape), "nbytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest()}
    values = t.tolist()
    return view, values if t.numel() <= list_max else None, hashlib.sha256(json.dumps(values).encode()).hexdigest()


@pytest.fixture(scope="module")
def page():
    if not os.path.exists(os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")):
        pytest.fail("the readback test needs Chromium (scripts/setup.sh installs it)")
    run_page.ensure_pyodide(run_page.SITE)
    wheel.publish(wheel.build())
    server, base = serve.start(ROOT)
    driver = run_page.chrome()
    driver.set_script_timeout(120)   # a loaded 2-core machine can hold the page's thread a while
    try:
        status, text = run_page.wait_for_page(driver, base + "tests/browser/fixtures/readback.html", 180, echo=False)
        summary = driver.execute_script("return globalThis.torchwebReadback || null;")
        console = run_page.console_log(driver) if status != "DONE" else ""
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    assert status == "DONE", f"page status {status}:\n{text[-4000:]}\n{console}"
    return summary


@pytest.mark.browser
def test_readback_values(page):
    mod = _check_module()
    D = "cpu"
    failures = []
    for name, expr in mod["CASES"]:
        view, values, list_sha = _expected(eval(expr, {"torch": torch, "D": D}), mod["LIST_MAX"])
        got = page["cases"][name]
        # (float16 without shader-f16 is held in f32 words: the same values either way)
        for form in ("memoryview", "to_memoryview", "to_memoryview_async"):
            if got[form] != view:
                failures.append(f"{name} {form}: {got[form]} != {view}")
        for form in ("tolist", "tolist_async"):
            if values is not None and got[form] != values:
                failures.append(f"{name} {form}: {str(got[form])[:200]} != {str(values)[:200]}")
            if values is None and got[form + "_sha256"] != list_sha:
                failures.append(f"{name} {form}: digest differs")
    for name, desc in page["gathered"].items():
        expr = dict(mod["CASES"])[name]
        view = _expected(eval(expr, {"torch": torch, "D": D}), 0)[0]
        if desc != view:
            failures.append(f"gathered {name}: {desc} != {view}")
    assert not failures, "\n".join(failures)


@pytest.mark.browser
def test_staging_buffers_bounded(page):
    v = page["varying"]
    assert v["bad"] == [], f"wrong values at (read, n): {v['bad'][:10]}"
    before, after = v["before"], v["after"]
    assert 1 <= after["staging"] <= STAGING_KEEP, after   # reused, and bounded
    assert after["stagingBytes"] <= STAGING_BUDGET, after
    assert max(v["staging_seen"]) <= STAGING_KEEP, v["staging_seen"]   # bounded all along
    print("memoryview(t) of 1M float32 in the page, ms (sorted):", page["ms_1M"])


@pytest.mark.browser
def test_webgpu_error_surfaces_at_read(page):
    errs = dict((k, v) for k, v in page["errors"])
    for form in ("sync", "async"):
        assert errs[form] and "WebGPU reported errors" in errs[form], errs
        assert errs[form].count("GPUValidationError") == 1, errs   # one bad copy, one report
        assert errs[form + " left"] == [], errs   # nothing reported late (a later read's error)
        assert errs[form + " after"] is True, errs
