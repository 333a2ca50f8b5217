"""Tier 1: CPython with the native driver on software Vulkan (lavapipe) and the numpy cpu
device, compared with PyTorch (CPU) as the oracle."""

import os
import sys

# Browser-like limits, so that a kernel a browser would refuse fails here too.
os.environ.setdefault("TORCHWEB_BROWSER_LIMITS", "1")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
_LVP = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if "VK_ICD_FILENAMES" not in os.environ and os.path.exists(_LVP):
    os.environ["VK_ICD_FILENAMES"] = _LVP

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402

import torchweb  # noqa: E402

DEVICES = ["cpu", "webgpu"]


def pytest_report_header(config):
    try:
        info = torchweb.webgpu.adapter_info()
        return f"torchweb webgpu adapter: {info}"
    except RuntimeError as e:
        return f"torchweb webgpu adapter: none ({e})"


@pytest.fixture(params=DEVICES)
def device(request):
    if request.param == "webgpu" and not torchweb.webgpu.is_available():
        pytest.fail("no WebGPU adapter: install mesa-vulkan-drivers (lavapipe) and wgpu")
    return request.param


@pytest.fixture
def dispatches(monkeypatch):
    """[count]: the webgpu kernels dispatched since the fixture began (tests set count[0] = 0
    after a synchronize() to count a stretch of their own)."""
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    torchweb.webgpu.synchronize()
    count = [0]
    real = rt.record   # (every dispatch of every kernel passes there: Runtime.dispatch too)

    def counting(*args, **kw):
        count[0] += 1
        return real(*args, **kw)
    monkeypatch.setattr(rt, "record", counting)
    return count


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="run the differential fuzz (tests/test_fuzz.py) in its long mode: many more "
                          "examples, a random seed, failures saved to tests/fuzz_regressions.json")
