"""The real torchvision as the tests' oracle, on the host's CPU-only PyTorch.

PyPI's torchvision wheel links its C++ operators (nms, roi_align...) against a CUDA build of
torch, so with the CPU torch its extension does not load and its `_meta_registrations` (fake
kernels for those operators) fails at import. The tests need only its pure-Python parts
(transforms, datasets, models, utils), so those two registration modules are stubbed out
before the import. Skips the calling test module when torchvision is not installed."""

import functools
import http.server
import sys
import threading
import types

import pytest

for _name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
    sys.modules.setdefault(_name, types.ModuleType(_name))

tv = pytest.importorskip("torchvision")
import torchvision.transforms.v2  # noqa: E402,F401  (not imported by torchvision itself)
import torchvision.transforms.v2.functional  # noqa: E402,F401


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served(tmp_path):
    """A local HTTP server over tmp_path/www (its base URL)."""
    www = tmp_path / "www"
    www.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(www)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield www, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
