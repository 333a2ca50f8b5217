"""Per-sample gradients of the torch.func tutorial's CNN (tutorials/intermediate/per_sample_grads:
conv 1->32, conv 32->64, max_pool, fc 9216->128, fc 128->10, MNIST-sized input) for a batch of
N samples: vmap(grad(loss)) run batched (the batching rules) against the per-entry loop
(TORCHWEB_VMAP=loop's path), on each device: wall time (best of 3, result read back), GPU
dispatches (webgpu) and the largest difference between the two.

    python3 bench/vmap_per_sample_grads.py [--n 64] [--devices cpu,webgpu] [--small]"""

import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torchweb as torch  # noqa: E402
from torchweb.func import functional_call, grad, vmap  # noqa: E402
from torchweb.func._loop import vmap_loop  # noqa: E402


def model(small):
    nn, F = torch.nn, torch.nn.functional
    c1, c2, hidden = (4, 8, 16) if small else (32, 64, 128)

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, c1, 3, 1)
            self.conv2 = nn.Conv2d(c1, c2, 3, 1)
            self.fc1 = nn.Linear(c2 * 12 * 12, hidden)
            self.fc2 = nn.Linear(hidden, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)
    return SimpleCNN()


class DispatchCount:
    """Counts the webgpu runtime's dispatches (every kernel of every op passes there)."""

    def __init__(self):
        from torchweb.backends.webgpu.runtime import Runtime
        self.cls, self.n = Runtime, 0
        self.orig = Runtime.dispatch

    def __enter__(self):
        def counted(rt, *a, **k):
            self.n += 1
            return self.orig(rt, *a, **k)
        self.cls.dispatch = counted
        return self

    def __exit__(self, *exc):
        self.cls.dispatch = self.orig


def run(dev, n, small):
    torch.manual_seed(0)
    net = model(small).to(dev)
    data = torch.randn(n, 1, 28, 28, device=dev)
    targets = torch.randint(10, (n,), device=dev)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def loss(params, sample, target):
        pred = functional_call(net, params, (sample.unsqueeze(0),))
        return torch.nn.functional.nll_loss(pred, target.unsqueeze(0))
    results = {}
    for name, transform in (("batched", vmap), ("loop", vmap_loop)):
        f = transform(grad(loss), in_dims=(None, 0, 0))

        def step():
            g = f(params, data, targets)
            for v in g.values():
                v.sum().item()
            return g
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = step()
            best = float("inf")
            for _ in range(3):
                t = time.perf_counter()
                step()
                best = min(best, time.perf_counter() - t)
            dispatches = None
            if dev == "webgpu":
                torch.webgpu.synchronize()
                with DispatchCount() as c:
                    step()
                    torch.webgpu.synchronize()
                dispatches = c.n
        results[name] = (best, dispatches, out)
    diff = max(float((results["batched"][2][k] - results["loop"][2][k]).abs().max()) for k in params)
    for name in ("batched", "loop"):
        best, d, _ = results[name]
        print(f"{dev:7s} {name:8s} N={n}: {best * 1e3:9.1f} ms" + (f", {d} dispatches" if d is not None else ""))
    print(f"{dev:7s} speedup {results['loop'][0] / results['batched'][0]:.1f}x, max |batched - loop| = {diff:.2e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--devices", default="cpu,webgpu")
    ap.add_argument("--small", action="store_true", help="the test's smaller CNN (4/8 channels, 16 hidden)")
    a = ap.parse_args()
    for dev in a.devices.split(","):
        run(dev, a.n, a.small)


if __name__ == "__main__":
    main()
