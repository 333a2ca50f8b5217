"""Where a compiled MLP Adam step's time goes on the replay: the whole call against the Python
that recomputes the optimizer's scalars (Optimizer._replay_scalars). Prints both, ms per call."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
import torchweb as torch  # noqa: E402
from torchweb.optim.optimizer import Optimizer  # noqa: E402
from workloads import _compiled, _mlp_step  # noqa: E402

spent = [0.0]
orig = Optimizer._replay_scalars


def timed(self, *args):
    t = time.perf_counter()
    try:
        return orig(self, *args)
    finally:
        spent[0] += time.perf_counter() - t


Optimizer._replay_scalars = timed
fn = _compiled(lambda lib, dev: _mlp_step(lib, dev, 64))(torch, "webgpu")
for _ in range(20):
    fn()
torch.webgpu.synchronize()
best = float("inf")
for _ in range(5):
    spent[0] = 0.0
    t = time.perf_counter()
    for _ in range(50):
        fn()
    torch.webgpu.synchronize()
    total = (time.perf_counter() - t) / 50
    if total < best:
        best, scal = total, spent[0] / 50
print(f"call {best * 1e3:.3f} ms, replay scalars {scal * 1e3:.3f} ms")
