"""A GPT-2 embedding table (50257 x 768 float32, 154 MB) under a browser's default binding
limit (maxStorageBufferBindingSize 128 MiB, requested natively with TORCHWEB_BROWSER_LIMITS=1):
upload, embedding gather, the tied lm-head's logits (x @ W.t()), a column sum and the table's
gradient, each compared with PyTorch, with the time each took. The long form of
tests/test_binding_limit.py, which lowers the limit to 1 MiB to stay quick.

    python3 bench/binding_limit.py      # ~20 s and ~1 GB of memory on lavapipe
"""

import os
import sys
import time

os.environ.setdefault("TORCHWEB_BROWSER_LIMITS", "1")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import torchweb  # noqa: E402


def check(name, got, want, tol, t0):
    err = float(np.abs(got.detach().cpu().numpy() - want.detach().numpy()).max())
    print(f"{name:28s} max |error| {err:.2e}  {time.perf_counter() - t0:6.2f} s")
    if not err <= tol:
        raise SystemExit(f"{name}: error {err} past {tol}")


def main():
    limits = torchweb.webgpu.limits()
    print(f"maxStorageBufferBindingSize {limits['max-storage-buffer-binding-size']}, "
          f"maxBufferSize {limits['max-buffer-size']}")
    w = torch.randn(50257, 768, generator=torch.Generator().manual_seed(0))
    print(f"table {tuple(w.shape)}: {w.numel() * 4} bytes")
    t0 = time.perf_counter()
    W = torchweb.tensor(w.numpy(), device="webgpu").requires_grad_(True)
    tw = w.clone().requires_grad_(True)
    idx = torch.tensor([[0, 50256, 25000, 42000, 7, 50256]])
    e = torchweb.nn.functional.embedding(torchweb.tensor(idx.numpy(), device="webgpu"), W)
    te = torch.nn.functional.embedding(idx, tw)
    check("embedding", e, te, 0, t0)
    x = torch.randn(1, 6, 768, generator=torch.Generator().manual_seed(1))
    logits = (e + torchweb.tensor(x.numpy(), device="webgpu")) @ W.t()
    tl = (te + x) @ tw.t()
    check("logits (tied lm-head)", logits, tl, 1e-3, t0)
    check("W.sum(0)", W.detach().sum(0), w.sum(0), 1e-2, t0)
    logits.square().mean().backward()
    tl.square().mean().backward()
    check("W.grad", W.grad, tw.grad, 1e-5, t0)


if __name__ == "__main__":
    main()
