# bfloat16 in the page (no numpy there: the pure-Python paths): a model cast with .bfloat16(),
# its forward, a checkpoint saved and loaded in memory (BFloat16Storage), conversions that
# round (ties to even, subnormals, overflow) and PyTorch's promotion. Weights and inputs are
# multiples of 1/64, so every float32 sum is exact and only the rounding to bfloat16 is tested.
import io

import torch
import torch.nn as nn


def build():
    return nn.Sequential(nn.Linear(12, 20), nn.ReLU(), nn.Linear(20, 6))


model = build()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.tensor([((i * 37 + k * 11) % 29 - 14) / 64 for i in range(p.numel())]).reshape(p.shape))
model = model.bfloat16()
x = torch.tensor([((i * 13) % 17 - 8) / 8 for i in range(3 * 12)]).reshape(3, 12).bfloat16()
with torch.no_grad():
    y = model(x)

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
sd = torch.load(buf)
fresh = build().bfloat16()
fresh.load_state_dict(sd)
with torch.no_grad():
    y2 = fresh(x)

values = torch.tensor([1.00390625, 1.01171875, 3.14159, -2.5e-3, 1e-40, 3.39e38, 3.4e38, 65504.0])
b = values.bfloat16()
result = {"y": y.float().flatten().tolist(), "reloaded_equal": bool((y2 == y).all().item()),
          "dtypes": [str(v.dtype) for v in sd.values()], "y_dtype": str(y.dtype),
          "rounded": b.float().tolist(), "sum": (b[:4] * 3 + 1).float().tolist(),
          "promotion": [str((b + values.half()).dtype), str((b + values).dtype), str((b * 2).dtype),
                        str((b + torch.tensor([1, 2, 3, 4, 5, 6, 7, 8])).dtype)]}
