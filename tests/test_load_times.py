"""What loading torchweb costs in a plain Pyodide page (issue 10), in headless Chromium with
WebGPU (SwiftShader): scripts/load_probe.py's page times loadPyodide, installing the wheel,
`import torchweb`, the first `torchweb.webgpu.init_async()` and a first small matmul read back.
The test checks that each phase was measured, that torchweb imported and found a WebGPU
adapter, and that the matmul's values equal PyTorch's for the same inputs (exact: the inputs are
quarters and eighths, so every float32 product and sum is exact). About 15 s here at load 5,
45 s at load 13; scripts/measure_load.py runs the same probe plus every page."""

import json
import os
import sys
import zipfile

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import load_probe  # noqa: E402
import run_page  # noqa: E402
import wheel  # noqa: E402


@pytest.mark.browser
def test_plain_pyodide_load_phases():
    if not os.path.exists(os.environ.get("TORCHWEB_CHROMIUM", "/usr/bin/chromium")):
        pytest.fail("the load probe needs Chromium (scripts/setup.sh installs it)")
    run_page.ensure_pyodide(run_page.SITE)
    built = wheel.publish(wheel.build())
    server, base = load_probe.start(run_page.SITE)
    driver = run_page.chrome()
    try:
        probe = load_probe.measure_plain(driver, base, timeout=90)
        console = run_page.console_log(driver) if probe["status"] != "DONE" else ""
    finally:
        run_page.quit_chrome(driver)
        sent = server.take()
        server.shutdown()
    assert probe["status"] == "DONE", f"{probe.get('errors')}\n{console}"
    assert probe["errors"] == []
    for name in load_probe.PHASES:
        assert probe["phases"][name] > 0, (name, probe["phases"])
    # the phases ran one after another: each ends after the one before
    ends = [probe["ends"][name] for name in load_probe.PHASES]
    assert ends == sorted(ends), probe["ends"]
    # the wheel the page loaded is the pages' one just built (bytecode compiled by Pyodide's own
    # Python where Node could run it: no source compiled in the page), and torchweb's modules
    # were imported
    with open(os.path.join(run_page.SITE, "wheels", "latest.json")) as f:
        latest = json.load(f)
    loaded = os.path.join(run_page.SITE, "wheels", latest.get("pyodide_wheel", latest["wheel"]))
    assert latest["wheel"] == os.path.basename(built)
    assert probe["wheel"] == os.path.basename(loaded)
    assert sent["/wheels/" + probe["wheel"]] == os.path.getsize(loaded)
    if "pyodide_wheel" in latest:
        # no .py of torchweb in the page but the modules the pages show as code (wheel.KEEP_SOURCE:
        # torchweb.models, imported on first use, not by `import torchweb`)
        with zipfile.ZipFile(loaded) as z:
            sources = [n for n in z.namelist() if n.endswith(".py")]
        assert sources and all(n.startswith(wheel.KEEP_SOURCE) for n in sources), sources
        assert probe["compile"]["files"] == len(sources), probe["compile"]
    assert probe["modules"] > 10
    assert probe["adapter"], "torchweb.webgpu.adapter_info() was empty"

    ns = {"torch": torch}
    exec(load_probe.MATMUL_INPUTS, ns)
    want = ns["a"] @ ns["b"]
    got = probe["matmul"]
    assert got["device"].startswith("webgpu"), got["device"]
    assert got["shape"] == list(want.shape)
    assert torch.equal(torch.tensor(got["values"], dtype=torch.float32), want)
    # what a first visit downloads, as the page's Resource Timing list counts it
    assert probe["resources"]["transfer"] >= os.path.getsize(loaded)
