# The first page's snippet: a matmul on the GPU, read back both ways. Run with runPythonAsync,
# which allows top-level await and lets .tolist() block on the GPU (JSPI).
import torchweb as torch

try:
    init_async = torch.webgpu.init_async
except AttributeError:  # until torchweb/__init__ exports it
    from torchweb.backends.webgpu.driver_browser import init_async

info = await init_async()
print("adapter:", ", ".join(f"{k}={v}" for k, v in info.items() if v not in ("", None)))

a = torch.arange(6.).reshape(2, 3)
b = torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0]])
c = a @ b.T
print("device:", c.device)
print("a @ b.T =", c.tolist())                      # blocks on the GPU through JSPI
print("async   =", await c.tolist_async())          # works even where blocking cannot
assert c.tolist() == [[4.0, 5.0], [13.0, 12.5]], c.tolist()
print("check: ok")
