# Device loss in the page (docs/reliability.md, "Device loss"): a small model runs, the device is
# destroyed in JS (WebGPU's device.destroy(), through torchweb's test hook), the next op raises
# DeviceLostError with WebGPU's reason, the old model's tensors raise when touched, and after
# torch.webgpu.reset() a rebuilt model gives PyTorch's numbers; three more loss/reset cycles leave
# no GPU objects behind in runtime.mjs. PyTorch has no device to lose: there the script states
# what the page must report, and computes the numbers that both compare.
import math

import torch
import torch.nn as nn


def formula(shape, scale, phase):
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(0.37 * i + phase) for i in range(n)]).reshape(shape)


def build():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_(formula(p.shape, 0.5, k))
    return model


def run(model):
    return model(formula((5, 4), 1.0, 0.3)).softmax(-1).sum(0).tolist()


model = build()
before = run(model)
webgpu = getattr(torch, "webgpu", None)
if webgpu is not None and hasattr(webgpu, "_destroy_device"):   # torchweb, on the page's GPU
    from torchweb.backends.webgpu.runtime import get_runtime

    def lose():
        webgpu._destroy_device()
        try:
            run(build())
        except webgpu.DeviceLostError as e:
            return "DeviceLostError: " + ("lost, destroyed" if "device was lost" in str(e)
                                          and e.reason.startswith("destroyed") else str(e))
        return "no error"

    first = lose()
    try:
        model[0].weight.sum().item()
        old = "no error"
    except webgpu.DeviceLostError as e:
        old = "DeviceLostError: " + ("old tensor" if "this tensor was on a WebGPU device that was lost" in str(e) else str(e))
    webgpu.reset()
    fresh = webgpu.memory_allocated()
    model = build()
    after = run(model)
    objects = get_runtime().driver.stats()
    for _ in range(3):
        lose()
        webgpu.reset()
        run(build())
    leaked = {k: v for k, v in get_runtime().driver.stats().items() if v > objects[k]}
else:   # PyTorch: what the page must report
    first, old, fresh, leaked = "DeviceLostError: lost, destroyed", "DeviceLostError: old tensor", 0, {}
    after = run(build())
result = {"before": before, "first_op": first, "old_tensor": old, "allocated_after_reset": fresh,
          "after_reset": after, "leaked_js_objects": leaked}
