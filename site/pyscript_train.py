# PyScript page's program (site/pyscript.html, site/pyscript-worker.html): trains a tiny linear
# regression on the GPU with plain PyTorch code (`import torchweb as torch`) and reports the
# adapter, the device and the loss curve to the page. On the main thread it calls the page's
# twShow(); in a PyScript worker (no DOM without COOP/COEP) it posts to a BroadcastChannel.
import json
import time
import traceback

import js
from pyodide.ffi import can_run_sync

IN_WORKER = not hasattr(js, "document")
_channel = js.BroadcastChannel.new("torchweb-pyscript") if IN_WORKER else None


def emit(**msg):
    text = json.dumps(msg)
    if IN_WORKER:
        _channel.postMessage(text)
    else:
        js.twShow(text)


async def main(steps=40):
    t0 = time.perf_counter()
    emit(kind="stage", text=f"Python ready ({'worker' if IN_WORKER else 'main thread'}, "
                            f"blocking readback {'on' if can_run_sync() else 'off'})", progress=40)
    import torchweb as torch

    if not torch.webgpu.is_available():
        emit(kind="error", text="WebGPU is missing in this browser (navigator.gpu is not there): "
                                "this page needs a WebGPU adapter")
        return
    if not can_run_sync():
        await torch.webgpu.init_async()
    info = torch.webgpu.adapter_info()
    adapter = ", ".join(f"{k}={v}" for k, v in info.items() if v not in ("", None)) or "(no details)"
    emit(kind="adapter", text=adapter, progress=50)

    torch.manual_seed(0)
    device = "webgpu"
    x = torch.randn(64, 3, device=device)
    w_true = torch.tensor([[2.0], [-3.0], [0.5]], device=device)
    y = x @ w_true + 1.0
    model = torch.nn.Linear(3, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.MSELoss()
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(await loss.tolist_async())   # works with or without JSPI
        emit(kind="step", step=step + 1, steps=steps, loss=losses[-1],
             progress=50 + 50 * (step + 1) / steps)
    weight = await model.weight.tolist_async()
    bias = await model.bias.tolist_async()
    emit(kind="done", device=str(loss.device), adapter=adapter, losses=losses, weight=weight,
         bias=bias, seconds=round(time.perf_counter() - t0, 3), worker=IN_WORKER, progress=100)


try:
    await main()  # noqa: F704  (PyScript runs scripts with top-level await)
except BaseException:
    emit(kind="error", text=traceback.format_exc())
