# The first page's snippet: a matmul on the GPU, read back both ways. Run with runPythonAsync,
# which allows top-level await and lets .tolist() block on the GPU (JSPI).
import pyodide.ffi

import torchweb as torch

if not pyodide.ffi.can_run_sync():   # no JSPI here: start WebGPU without blocking
    await torch.webgpu.init_async()

a = torch.arange(6.).reshape(2, 3)   # the first op starts WebGPU (blocking on it via JSPI)
b = torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0]])
c = a @ b.T
info = torch.webgpu.adapter_info()
print("adapter:", ", ".join(f"{k}={v}" for k, v in info.items() if v not in ("", None)))
print("device:", c.device)
print("a @ b.T =", c.tolist())                      # blocks on the GPU through JSPI
print("async   =", await c.tolist_async())          # works even where blocking cannot
assert c.tolist() == [[4.0, 5.0], [13.0, 12.5]], c.tolist()
print("check: ok")
